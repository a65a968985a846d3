import asyncio, sys, time
sys.path.insert(0, "benchmarks")
import protocol_floor as pf
proto, code, side, seconds = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
proc, server = pf.start_server()
async def main():
    floor, ours = pf.Floor(), pf.Yoagent()
    sc = pf.SCENARIOS[code]
    base = f"{server}/{code}/{proto}" + ("/v1" if proto in ("completions", "responses") else "")
    expect = pf.final_text(sc)
    run = (lambda: ours.run(proto, base)) if side == "yoagent" else (lambda: getattr(floor, proto)(base))
    await pf.batch(run, expect, 2)
    print("ready", flush=True)
    end = time.monotonic() + seconds
    n = 0
    while time.monotonic() < end:
        await pf.batch(run, expect, 5); n += 5
    print("conversations", n)
try:
    asyncio.run(main())
finally:
    proc.terminate(); proc.wait()
