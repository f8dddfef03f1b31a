"""Portuguese words of a device command, as regular-expression parts."""

from __future__ import annotations

from typing import Final

from .phrases import TIMES, Phrases

# A clitic after an imperative or infinitive: "liga-a", "desligá-lo".
_CLITIC_PT: Final = r"(?:-(?:o|a|os|as|lo|la|los|las))?"

# Infinitives of device verbs, after "can you" or alone ("Desligar a luz").
_PT_VERBS: Final = r"""(?:
    ligar|desligar|acender|apagar|abrir|fechar|p[ôo]r|colocar|aumentar|
    diminuir|baixar|subir|ativar|activar|desativar|desactivar|trancar|
    destrancar|tocar|pausar|parar|mudar|ajustar|definir|adicionar|mostrar|
    dizer|dar|cancelar|alterar|eliminar|retomar|continuar|reduzir|suspender)"""

PHRASES: Final = Phrases(
    lead=r"""ei|hey|ok|por\s+favor|se\s+faz\s+favor|agora|e|tamb[ée]m|depois|
        ent[ãa]o|v[áa]|bom""",
    command=r"""
        (?:me\s+)?(?:(?:voc[êe]|tu)\s+)?
          (?:pode|podes|poderia|podia|podias|consegue|consegues|quer|queres)
          \s+(?:me\s+)?(?:por\s+favor\s+)?"""
    + _PT_VERBS
    + r"""(?:-(?:me|o|a|os|as|lo|la|los|las))?|
        me\s+(?:diz|diga|mostra|mostre|d[áa]|d[êe]|fala|fale|conta|conte|
             p[õo]e|coloca|toca)|
        (?:diz|d[áa]|mostra|mostre|diga|conta)-me|"""
    + _PT_VERBS
    + _CLITIC_PT
    + r"""|
        (?:liga|ligue|desliga|desligue|acende|acenda|apaga|apague|abre|abra|
           fecha|feche|p[õo]e|ponha|coloca|coloque|aumenta|aumente|diminui|
           diminua|baixa|baixe|sobe|suba|ativa|activa|ative|desativa|
           desactiva|desative|tranca|tranque|destranca|toca|toque|pausa|
           retoma|muda|mude|ajusta|ajuste|adiciona|adicione|acrescenta|
           mostra|mostre|cancela|define|altera|reduz|elimina|continua|
           suspende)"""
    + _CLITIC_PT
    + r"""|
        para(?=\s+(?:o|a|os|as)\s)|pr[óo]xim[oa]|volume|
        qual|quais|o\s+que|quant[oa]s?|onde|quem|que\s+horas|
        como\s+est[áa]|h[áa]\s+alg[uú]\w*""",
    question=r"que|é|est[áa]|como|quando|h[áa]|tem|s[ãa]o",
    greeting=r"""ol[áa]|oi|bom\s+dia|boa\s+(?:tarde|noite)|
        (?:muito\s+)?obrigad[oa]|valeu|tchau|adeus|at[ée]\s+logo|esquece|
        deixa\s+(?:pra|para)\s+l[áa]|deixa\s+estar|perfeito|[óo]timo""",
    personal=r"""
        eu|me|mim|comigo|meu|minha|meus|minhas|nós|noss[oa]s?|a\s+gente|
        lembr\w*|esque[çc]\w*|anot[ae]|nota|prefir\w*|prefer\w*|gosto|
        gosta|gostamos|gostam|adoro|amo|odeio|favorit\w*|vegetarian[oa]s?|
        vegan[oa]s?|al[ée]rgic\w*|anivers[áa]rio|sempre|nunca|normalmente|
        geralmente|costum\w*|espos[ao]|marido|mulher|companheir\w*|
        namorad\w*|filh[oa]s?|crian[çc]as?|m[ãa]e|pai|pais|irm[ãa]o?s?|
        amig[oa]s?|c[ãa]o|cachorro|gato|av[óô]|ti[oa]s?|prim[oa]s?|
        beb[éê]|fam[íi]lia|vizinh[oa]s?|sou|estou|tenho|moro|mora|
        moramos|vivo|trabalho|trabalha|trabalhamos|mudei|mudamos|somos|
        estamos|temos|quero|queremos|preciso|a\s+partir\s+de\s+agora|
        daqui\s+(?:para|pra)\s+(?:a\s+)?frente|n[ãa]o|deve|devem|deveria|
        tem\s+que|tem\s+de|sempre\s+que|porque|j[áa]\s+que|visto\s+que|
        combinad[oa]|combinamos|f[ée]rias|dias\s+[úu]teis|
        fins\s+de\s+semana|avariad[oa]s?|estragad[oa]s?|toda\s+vez|
        cada\s+vez|cada\s+"""
    + TIMES
    + r"|tod[oa]s\s+[oa]s\s+"
    + TIMES,
    owned=r"""(?:meu|minha|meus|minhas|noss[oa]s?)\s+(?:
        temporizador(?:es)?|alarmes?|despertador|luz|luzes|candeeiros?|
        l[âa]mpadas?|cozinha|sala|quarto|casa\s+de\s+banho|banheiro|
        escrit[óo]rio|garagem|jardim|corredor|cave|por[ãa]o|s[óo]t[ãa]o|
        casa|aquecimento|termostato|ventoinha|ventilador|tv|televis[ãa]o|
        m[úu]sica|playlist|coluna|persianas?|cortinas?|porta|janelas?|
        carro|aspirador|frigor[íi]fico|geladeira|forno|lista\s+de\s+compras)""",
)
