"""Spanish words of a device command, as regular-expression parts."""

from __future__ import annotations

from typing import Final

from .phrases import CLITIC, TIMES, Phrases

# Infinitives of device verbs, after "can you" or alone ("Apagar la luz").
_ES_VERBS: Final = r"""(?:
    encender|apagar|abrir|cerrar|poner|subir|bajar|activar|desactivar|
    bloquear|desbloquear|reproducir|pausar|parar|detener|decir|dar|mostrar|
    cambiar|ajustar|a[ñn]adir|agregar|quitar|silenciar|cancelar|programar|
    aumentar|indicar|continuar|reanudar|eliminar|borrar)"""

PHRASES: Final = Phrases(
    lead=r"""oye|hey|ok|vale|venga|por\s+favor|ahora|y|tambi[ée]n|luego|
        entonces|a\s+ver|bueno""",
    command=r"""
        (?:me\s+)?(?:puedes|podr[íi]as|puede|podr[íi]a|quieres)\s+(?:me\s+)?
          (?:por\s+favor\s+)?"""
    + _ES_VERBS
    + CLITIC
    + r"""|
        me\s+(?:pones|pondr[íi]as|enciendes|apagas|abres|cierras|subes|
             bajas|dices|dir[íi]as|das|pasas|quitas|activas|muestras)|"""
    + _ES_VERBS
    + CLITIC
    + r"""|
        (?:enci[ée]nde|ap[áa]ga|[áa]bre|ci[ée]rra|pon|s[úu]be|b[áa]ja|
           act[íi]va|desact[íi]va|bloqu[ée]a|desbloqu[ée]a|reprod[úu]ce|
           pausa|reanuda|det[ée]n|c[áa]mbia|aj[úu]sta|aum[ée]nta|
           dismin[úu]ye|a[ñn][áa]de|agr[ée]ga|mu[ée]stra|qu[íi]ta|
           sil[ée]ncia|canc[ée]la|ind[íi]ca|contin[úu]a|devu[ée]lve|
           elim[íi]na|b[óo]rra|
           enci[ée]nda|ap[áa]gue|[áa]bra|ci[ée]rre|p[óo]nga|s[úu]ba|
           b[áa]je|act[íi]ve|desact[íi]ve|canc[ée]le|mu[ée]stre|
           a[ñn][áa]da|agr[ée]gue|ind[íi]que|d[íi]ga)"""
    + CLITIC
    + r"""|
        (?:di|da)(?:me|nos|le|les|lo|la)|siguiente|volumen|
        qué|a\s+qué|en\s+qué|cu[áa]l(?:es)?|cu[áa]nt[oa]s?|cuándo|cómo|
        d[óo]nde|qui[ée]n(?:es)?|hay\s+alg[úu]n[oa]?s?""",
    question=r"que|est[áa]|hay|cuando|como",
    greeting=r"""hola|buen[oa]s\s+(?:d[íi]as|tardes|noches)|buen\s+d[íi]a|
        (?:muchas\s+)?gracias|adi[óo]s|hasta\s+(?:luego|ma[ñn]ana)|
        olv[íi]dalo|d[ée]jalo|da\s+igual|nada|perfecto|genial|vale""",
    personal=r"""
        yo|me|mi|mis|mí|conmigo|nosotr[oa]s|nuestr[oa]s?|
        recuerd\w*|recu[ée]rd\w*|acu[ée]rd\w*|olvid\w*|apunta|anota|nota|
        prefi[ée]r\w*|prefer\w*|gusta|gustan|encanta|encantan|odio|
        favorit\w*|vegetarian[oa]s?|vegan[oa]s?|al[ée]rgic\w*|
        cumplea[ñn]os|aniversario|siempre|nunca|jam[áa]s|normalmente|
        generalmente|suele|solemos|suelo\s+\w+(?:ar|er|ir)|esposa|esposo|
        marido|mujer|pareja|novi[oa]|hij[oa]s?|ni[ñn][oa]s|mam[áa]|madre|
        pap[áa]|padre|herman[oa]s?|amig[oa]s?|perro|gato|abuel[oa]s?|
        t[íi][oa]s?|prim[oa]s?|beb[ée]|familia|vecin[oa]s?|
        soy|estoy|tengo|vivo|vive|vivimos|trabajo|trabaja|trabajamos|
        mud[ée]|mudamos|somos|estamos|tenemos|quiero|queremos|necesito|
        a\s+partir\s+de\s+ahora|de\s+ahora\s+en\s+adelante|
        no\s+(?:me|te|se|lo|la|los|las|le|les|\w+(?:es|as))|debe|
        deber[íi]a|hay\s+que|tiene\s+que|tienes\s+que|siempre\s+que|
        porque|ya\s+que|acordado|quedamos|vacaciones|entre\s+semana|
        d[íi]as\s+laborables|fines\s+de\s+semana|ten\s+en\s+cuenta|
        rot[oa]s?|estropead[oa]s?|
        cada\s+vez|cada\s+"""
    + TIMES
    + r"|tod[oa]s\s+l[oa]s\s+"
    + TIMES
    + r"|los\s+(?:lunes|martes|mi[ée]rcoles|jueves|viernes|s[áa]bados|domingos)",
    owned=r"""(?:mis?|nuestr[oa]s?)\s+(?:
        temporizador(?:es)?|cuenta\s+atr[áa]s|alarmas?|despertador|luz|
        luces|l[áa]mparas?|cocina|sal[óo]n|sala|dormitorio|habitaci[óo]n|
        cuarto|ba[ñn]o|oficina|despacho|garaje|jard[íi]n|pasillo|s[óo]tano|
        casa|calefacci[óo]n|termostato|ventilador|tele|televisi[óo]n|
        m[úu]sica|lista\s+de\s+(?:la\s+)?compra|altavoz|persianas?|
        cortinas?|puerta|ventanas?|coche|aspiradora|cortac[ée]sped|nevera|
        horno|lavavajillas|lavadora|secadora)""",
)
