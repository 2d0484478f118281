// Reads one JSON card per stdin line and writes, per line, the JSON of
// {"payload": <canonicalizeAgentCard(card)>} or {"error": <message>}: the JS SDK's own signing
// payload, which tests/core/test_js_interop.py holds explorer.core.card_forms' `a2a-js` form to.
import { createInterface } from "node:readline";
import { canonicalizeAgentCard } from "@a2a-js/sdk";

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of lines) {
  let out;
  try {
    out = { payload: canonicalizeAgentCard(JSON.parse(line)) };
  } catch (error) {
    out = { error: String(error?.message ?? error) };
  }
  process.stdout.write(`${JSON.stringify(out)}\n`);
}
