// Reads one JSON object {"card": <card>, "jwks": <JWKS>} per stdin line and writes, per line,
// {"accepted": true} or {"accepted": false, "error": <message>}: whether @a2a-js/sdk's own
// verifier, verifyAgentCardSignature, accepts the card with the keys of that JWKS looked up by
// kid. tests/core/test_signature_stacks.py holds the explorer's card.signature.accepted_by to it.
import { createInterface } from "node:readline";
import { verifyAgentCardSignature } from "@a2a-js/sdk";

console.debug = () => {}; // the verifier logs each failed entry with console.debug, on stdout

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of lines) {
  let out;
  try {
    const { card, jwks } = JSON.parse(line);
    const verify = verifyAgentCardSignature(async (kid) => {
      const key = (jwks.keys ?? []).find((candidate) => candidate.kid === kid);
      if (!key) throw new Error(`no key with kid ${kid}`);
      return key;
    });
    await verify(card);
    out = { accepted: true };
  } catch (error) {
    out = { accepted: false, error: String(error?.message ?? error) };
  }
  process.stdout.write(`${JSON.stringify(out)}\n`);
}
