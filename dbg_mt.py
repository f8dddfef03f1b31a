import asyncio, sys, tempfile
from pathlib import Path
sys.argv=["x"]
import bench.multiturn as mt
from custom_components.memory.engine.followups import is_follow_up
orig = mt.score
def score(tally, recalled, turn, ids):
    orig(tally, recalled, turn, ids)
    inv = {v:k for k,v in ids.items()}
    shown = [inv.get(i, i) for i in recalled.ids]
    bad = [k for k in turn.unrelated if ids[k] in recalled.ids]
    miss = [k for k in turn.expect if ids[k] not in recalled.ids]
    if (bad or miss) and VAR[0] == "all":
        print(f"{turn.say!r}: shown={shown} bad={bad} miss={miss} parts={sorted(recalled.parts)}")
VAR=["none"]
mt.score = score
orig_play = mt.play
async def play(store, clock, data, ids, encoder):
    return await orig_play(store, clock, data, ids, encoder)
class V(dict):
    def items(self):
        for k, v in super().items():
            VAR[0] = k
            yield k, v
mt.VARIANTS = V(mt.VARIANTS)
with tempfile.TemporaryDirectory() as d:
    asyncio.run(mt.measure("en", "keyword", Path(d), mt.DATA / "multiturn"))
