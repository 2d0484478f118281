// A loopback A2A agent built the way the @a2a-js/sdk documentation builds one, with the
// interview extension in front of the SDK's JSON-RPC handler.
//
// Why it exists: tests/core/test_js_interop.py interviews it with `interview-explorer verify` to prove
// the verifier agrees with a correct agent built on the official JavaScript SDK (its card
// signer, its card route, its JSON-RPC transport), not only with our own reference agents.
//
// Shape, each piece the SDK's own:
// - the card is a typed `AgentCard` object as a TypeScript author has to write it (every
//   non-optional field present, so `securitySchemes: {}`, `securityRequirements: []`,
//   `"required": false`, `tenant: ""` are on the wire);
// - it is signed by `generateAgentCardSignature` (ES256, jose) handed to `DefaultRequestHandler`,
//   and served by `agentCardHandler({agentCardProvider: requestHandler})`, the documented path:
//   the SDK signs on every card request, so each fetch carries a fresh ECDSA signature;
// - JSON-RPC is `jsonRpcHandler`; a small Express middleware in front of it answers requests
//   that activate the interview (A2A-Extensions) or name an `interview/*` method, and passes
//   everything else to the SDK untouched. An unactivated interview method gets -32601 from the
//   front: the SDK answers a call without `params` -32602 before it looks at the method.
// - answers are projections of the card as the SDK serves it (the JSON of the signed card),
//   computed once from the first signed card and pinned, so every fetch and every answer agree
//   on everything but the signature value, which `interview/identity` does not project.
// - with the SDK's `legacyCompat` on, the card route serves a v0.3 translation of the card to a
//   client that does not announce A2A-Version 1.0, and the agent answers a call about the card it
//   serves to the version that call announces (the SDK's own reading: no header means 0.3), as an
//   honest agent on the SDK would: the v0.3 card's `/url`, `/preferredTransport`,
//   `/protocolVersion` to a v0.3 caller.
//
// Usage: node agent.mjs [--legacy | --v03-only] [--guarded] [--misquote] [--seconds N].
// --legacy: a v1.0 and a v0.3 JSON-RPC interface, legacyCompat on; --v03-only: only a v0.3 JSON-RPC
// interface, legacyCompat on (the interview is then asked in v0.3); --misquote: the identity
// answer also projects a member that exists in neither card. Listens on 127.0.0.1 on an ephemeral
// port and prints one JSON line {"url", "jwks"} on stdout when ready; exits after N seconds (default 120).

import express from "express";
import * as jose from "jose";
import { generateAgentCardSignature } from "@a2a-js/sdk";
import { DefaultRequestHandler, InMemoryTaskStore } from "@a2a-js/sdk/server";
import { agentCardHandler, jsonRpcHandler, UserBuilder } from "@a2a-js/sdk/server/express";

const INTERVIEW = "https://agentsow.com/extensions/a2a-interview/v1";
const PREFIX = "interview/";
const QUESTIONS = ["identity", "capabilities", "usage", "terms", "refusals"];
const KID = "js-card-key-1";

const v03Only = process.argv.includes("--v03-only");
const legacy = process.argv.includes("--legacy") || v03Only;
const misquote = process.argv.includes("--misquote");
// --guarded: every JSON-RPC call needs `Authorization: Bearer $JS_AGENT_TOKEN`, and the card
// requires its bearer scheme. The card and the key set stay public.
const token = process.argv.includes("--guarded") ? process.env.JS_AGENT_TOKEN : undefined;
if (process.argv.includes("--guarded") && !token) throw new Error("--guarded needs JS_AGENT_TOKEN");
const secondsArg = process.argv.indexOf("--seconds");
const lifetime = secondsArg > 0 ? Number(process.argv[secondsArg + 1]) : 120;

const app = express();
const server = app.listen(0, "127.0.0.1");
await new Promise((resolve) => server.once("listening", resolve));
const base = `http://127.0.0.1:${server.address().port}`;

const { publicKey, privateKey } = await jose.generateKeyPair("ES256", { extractable: true });
const jwks = { keys: [{ ...(await jose.exportJWK(publicKey)), kid: KID, alg: "ES256", use: "sig" }] };

/** @type {import("@a2a-js/sdk").AgentCard} */
const card = {
  name: "JS SDK Ledger Agent",
  description: "Reconciles statements; built on @a2a-js/sdk with the interview in front.",
  supportedInterfaces: [
    ...(v03Only ? [] : [{ url: `${base}/a2a/jsonrpc`, protocolBinding: "JSONRPC", tenant: "", protocolVersion: "1.0" }]),
    // --legacy: also serve v0.3 clients, the SDK's documented legacyCompat set-up (--v03-only: only them).
    ...(legacy ? [{ url: `${base}/a2a/jsonrpc`, protocolBinding: "JSONRPC", tenant: "", protocolVersion: "0.3" }] : []),
  ],
  provider: { organization: "Interop Test Co", url: "https://interop.example" },
  version: "1.3.0",
  documentationUrl: undefined,
  capabilities: {
    streaming: false,
    pushNotifications: false,
    extensions: [
      {
        uri: INTERVIEW,
        description: "Answers the five interview questions from this card.",
        required: false,
        params: undefined,
      },
    ],
    extendedAgentCard: false,
  },
  // The SDK's TypeScript type for a scheme is ts-proto's oneof, and the card route serves it as
  // typed: `{scheme: {$case, value}}` on the wire, not the protojson `{httpAuthSecurityScheme}`.
  securitySchemes: {
    bearer: {
      scheme: { $case: "httpAuthSecurityScheme", value: { description: "", scheme: "Bearer", bearerFormat: "" } },
    },
  },
  securityRequirements: token ? [{ schemes: { bearer: { list: [] } } }] : [],
  defaultInputModes: ["text/plain"],
  defaultOutputModes: ["text/plain", "application/json"],
  skills: [
    {
      id: "reconcile-statement",
      name: "Reconcile a statement",
      description: "Matches statement lines against the ledger.",
      tags: ["finance", "reconciliation"],
      examples: [],
      inputModes: ["text/plain"],
      outputModes: ["application/json"],
      securityRequirements: [],
    },
    {
      id: "flag-exceptions",
      name: "Flag exceptions",
      description: "Lists lines that match nothing, with the reason (café, naïve, 日本).",
      tags: ["finance"],
      examples: ["flag the March statement"],
      inputModes: [],
      outputModes: [],
      securityRequirements: [],
    },
  ],
  signatures: [],
  iconUrl: undefined,
};

const signer = generateAgentCardSignature(privateKey, {
  alg: "ES256",
  kid: KID,
  typ: "JOSE",
  jku: `${base}/.well-known/jwks.json`,
});

class ReplyExecutor {
  async execute(requestContext, eventBus) {
    eventBus.publish({
      messageId: `reply-${requestContext.contextId}`,
      contextId: requestContext.contextId,
      role: 2, // ROLE_AGENT
      parts: [{ content: { $case: "text", value: "This agent only answers the interview." } }],
      metadata: {},
      extensions: [],
      referenceTaskIds: [],
      taskId: "",
    });
    eventBus.finished();
  }
  async cancelTask() {}
}

const requestHandler = new DefaultRequestHandler(
  card,
  new InMemoryTaskStore(),
  new ReplyExecutor(),
  undefined,
  undefined,
  undefined,
  undefined,
  signer,
);

// The card as served (JSON of the signed card), parsed back: answers project from these bytes.
const served = JSON.parse(JSON.stringify(await requestHandler.getAgentCard()));
// With legacyCompat, the card served to v0.3 callers (read from the SDK's own route once it is up).
let servedLegacy;

/** The card served to a caller announcing this A2A-Version (the SDK's rule: absent means 0.3). */
function cardFor(version) {
  const v = version && version.trim() !== "" ? version.trim() : "0.3";
  return legacy && v.startsWith("0.") ? servedLegacy : served;
}

function projector(doc) {
  return (member) => {
    let value = doc;
    for (const token of member.split("/").slice(1)) {
      value = value[token.replaceAll("~1", "/").replaceAll("~0", "~")];
    }
    return { source: { document: "card", member }, value };
  };
}

function refusal(detail) {
  return {
    refused: true,
    reason: "out_of_scope",
    detail,
    declared_skills: served.skills.map((s) => s.id),
  };
}

function answer(question, params, version) {
  const doc = cardFor(version);
  const skills = doc.skills;
  const selector = params && typeof params === "object" ? params.skill : undefined;
  let index = -1;
  if (selector !== undefined) {
    index = skills.findIndex((s) => s.id === selector);
    if (typeof selector !== "string" || index < 0 || !["usage", "terms"].includes(question)) {
      return refusal("no declared skill matches");
    }
  }
  const p = projector(doc);
  // Where to call, in the card's own layout: the v0.3 translation names it with url,
  // preferredTransport and protocolVersion.
  const interfaces = doc === served
    ? [p("/supportedInterfaces")]
    : ["/url", "/preferredTransport", "/protocolVersion", "/additionalInterfaces"]
        .filter((m) => doc[m.slice(1)] !== undefined).map(p);
  switch (question) {
    case "identity": {
      const wrong = misquote ? [{ source: { document: "card", member: "/interfaceUrl" }, value: `${base}/a2a/jsonrpc` }] : [];
      return {
        question,
        projections: [p("/name"), p("/provider"), ...interfaces, p("/version"), ...wrong],
      };
    }
    case "capabilities":
      return { question, projections: skills.flatMap((_, i) => [p(`/skills/${i}/id`), p(`/skills/${i}/description`)]) };
    case "usage": {
      const chosen = index >= 0 ? [index] : skills.map((_, i) => i);
      const modes = chosen.flatMap((i) =>
        ["inputModes", "outputModes"].filter((m) => skills[i][m] !== undefined).map((m) => p(`/skills/${i}/${m}`)),
      );
      const extra = ["securitySchemes", "securityRequirements", "security"].filter((m) => doc[m] !== undefined).map((m) => p(`/${m}`));
      return {
        question,
        projections: [...interfaces, ...modes, p("/defaultInputModes"), p("/defaultOutputModes"), ...extra],
      };
    }
    case "terms":
      return { question, declared: false, projections: [] };
    case "refusals":
      return { question, projections: skills.map((_, i) => p(`/skills/${i}/id`)) };
    default:
      return refusal("no such interview method");
  }
}

function activated(req) {
  const header = req.header("A2A-Extensions") ?? "";
  return header.split(",").map((s) => s.trim()).includes(INTERVIEW);
}

const rpcPath = "/a2a/jsonrpc";
if (token) {
  app.post(rpcPath, (req, res, next) => {
    if (req.header("Authorization") === `Bearer ${token}`) return next();
    res.setHeader("WWW-Authenticate", 'Bearer realm="interview"');
    return res.status(401).json({ error: "unauthorized", detail: "a bearer token is required" });
  });
}
app.post(rpcPath, express.json({ limit: "64kb" }), (req, res, next) => {
  const body = req.body;
  const method = body && typeof body === "object" && !Array.isArray(body) ? body.method : undefined;
  // Without the activation an interview method does not exist and must draw -32601. The SDK's
  // handler would say so only when `params` is present: it checks params before the method and
  // answers a call without them -32602, so the front answers unactivated interview methods itself.
  if (!activated(req)) {
    if (typeof method !== "string" || !method.startsWith(PREFIX)) return next();
    return res.json({ jsonrpc: "2.0", id: body.id ?? null, error: { code: -32601, message: "Method not found" } });
  }
  if (typeof method !== "string" || body.jsonrpc !== "2.0") {
    return res.json({ jsonrpc: "2.0", id: body?.id ?? null, error: { code: -32600, message: "Invalid Request" } });
  }
  // Node writes an array as one header line per element, the way the SDK echoes activations.
  res.setHeader("A2A-Extensions", [INTERVIEW]);
  const question = method.startsWith(PREFIX) ? method.slice(PREFIX.length) : "";
  const version = req.header("A2A-Version");
  const result = QUESTIONS.includes(question) ? answer(question, body.params, version) : refusal("no such interview method");
  return res.json({ jsonrpc: "2.0", id: body.id ?? null, result });
});
// express.json() above already parsed the body; the SDK's own parser skips a parsed body.
const legacyCompat = { enabled: legacy };
app.use(rpcPath, jsonRpcHandler({ requestHandler, userBuilder: UserBuilder.noAuthentication, legacyCompat }));
app.use("/.well-known/agent-card.json", agentCardHandler({ agentCardProvider: requestHandler, legacyCompat }));
app.get("/.well-known/jwks.json", (_req, res) => res.json(jwks));
if (legacy) {
  const response = await fetch(`${base}/.well-known/agent-card.json`, { headers: { "A2A-Version": "0.3" } });
  servedLegacy = await response.json();
}

process.stdout.write(`${JSON.stringify({ url: base, jwks })}\n`);
setTimeout(() => server.close(() => process.exit(0)), lifetime * 1000).unref();
setTimeout(() => process.exit(0), (lifetime + 5) * 1000);
