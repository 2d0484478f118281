"""Which agent a run is of: one agent across addresses (CONTRACT "Signatures are proofs").

Reference agents restarted on other ports, replicas behind new addresses and agents moved to
another host are one agent each: the history groups runs by what the card proves, not by where
it was fetched. A run is of, in this order:

1. the agent recorded under one of its signing identities: the JWK thumbprint of a key whose card
   signature verified (`card.signers`), with the card's name;
2. else the agent whose latest run was at the same address (card URL, else target), when the two
   have the same card name or either has none: a key rotated, or a signature that did not verify
   this time, at the address the agent answers on stays that agent (a `key` change of its own),
   and a run that got no card at all is the agent that lives there;
3. else, an unsigned card (or none) at an address: the agent first recorded there that way;
4. else a new agent.

So a signed agent moved to another address is one agent; an unsigned one is one agent per card
URL; a key rotation at the same address is one agent; a key rotation and a move at once is a
new agent (nothing ties the two keys together), as a card renamed under its key is (the name is
part of what the signature proves).

What the history keeps for it:

- `agents.agent`, unique, the identity an agent was first recorded under (`Identity.primary`):
  `key THUMBPRINT NAME` for a signed card, the address otherwise. Two runners recording a new
  agent at once meet on it and make one row.
- `agent_keys(key, agent_id)`: every signing identity an agent was recorded under (rule 1); a
  key stays the agent's until the agent is forgotten whole.
- `agents.address`: the address of its latest run; `addresses(agent_id, address, runs,
  last_run)`: every address it was seen on; `runs.address`: where each run was.

`merge_agents` is the migration that groups a history recorded by address: agents whose runs
were signed by one key under one name become one (their runs, change kinds and counters
counted again).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from explorer.store.sql import Conn

_KEY_PREFIX = "key "  # a URL or a path never starts so: the two kinds of identity never meet


def signing_identity(thumbprint: str, name: str | None) -> str:
    """The identity of a card signed by the key of `thumbprint` under the card name `name`."""
    return f"{_KEY_PREFIX}{thumbprint} {name or ''}"


@dataclass(frozen=True)
class Identity:
    """What a run says about which agent it is of."""

    address: str  # where the run was: the card URL, else the target
    name: str | None  # the card's name, as the history keeps it (capped)
    signers: tuple[str, ...]  # thumbprints of the keys whose card signatures verified, sorted

    @classmethod
    def of(cls, address: str, name: str | None, signers: Sequence[str] | None) -> Identity:
        return cls(address, name, tuple(sorted(set(signers or ()))))

    @property
    def keys(self) -> tuple[str, ...]:
        """Its signing identities (rule 1), the first signer's first."""
        return tuple(signing_identity(thumbprint, self.name) for thumbprint in self.signers)

    @property
    def primary(self) -> str:
        """What a new agent of this run is recorded under (`agents.agent`)."""
        return self.keys[0] if self.keys else self.address


# Rule 2: the agent whose latest run was at this address, under this name or with no name on
# either side; the parameters are the address and the name twice.
RESIDENT = """SELECT id FROM agents WHERE address = ?
    AND (CAST(? AS TEXT) IS NULL OR name IS NULL OR name = ?)
    ORDER BY last_run DESC LIMIT 1"""


def find_agent(conn: Conn, identity: Identity) -> int | None:
    """The id of the agent a run of `identity` is of by rules 1 and 2, or None (then rule 3, the
    agent recorded under `identity.primary`, is the upsert's to find)."""
    keys = identity.keys
    if keys:
        marks = ",".join("?" * len(keys))
        row = conn.execute(
            f"SELECT agent_id FROM agent_keys WHERE key IN ({marks}) ORDER BY key LIMIT 1", list(keys)
        ).fetchone()
        if row is not None:
            return int(row[0])
    row = conn.execute(RESIDENT, (identity.address, identity.name, identity.name)).fetchone()
    return None if row is None else int(row[0])


def merge_agents(conn: Conn) -> None:
    """The migration to agents across addresses (SQLite history version 5, PostgreSQL 3), after
    its statements added `runs.address`, `agents.address`, `agent_keys` and `addresses`.

    - Every run's address is its agent's card URL, as it was recorded by.
    - An agent's signing identities are those of its runs that state signers (every run recorded
      since the change kinds, and each agent's latest run before them) under the agent's name.
    - Agents that share one are one agent: the one with the latest run keeps its row and takes
      the others' runs; its runs' change kinds are decided again in their new order, and its
      counters counted again. Where two of its runs at two addresses meet, a card that differs in
      a member naming its address reads as changed declarations, as it does live.
    - A signed agent's row is then recorded under its signing identity, so an unsigned card later
      served at its old address is not taken for it.
    """
    from explorer.store.marks import signers_of_text
    from explorer.store.sql import COUNTERS_OF_AGENTS, LATEST_OF_AGENTS, _kinds_of_runs

    conn.execute("UPDATE runs SET address = (SELECT agent FROM agents WHERE agents.id = runs.agent_id)")
    agents = {
        int(agent_id): (name, int(last_run or 0))
        for agent_id, name, last_run in conn.execute("SELECT id, name, last_run FROM agents").fetchall()
    }
    keys_of: dict[int, set[str]] = {agent_id: set() for agent_id in agents}
    signed = "SELECT DISTINCT agent_id, signers FROM runs WHERE signers IS NOT NULL AND signers <> '[]'"
    for agent_id, text in conn.execute(signed).fetchall():
        keys_of[int(agent_id)].update(Identity.of("", agents[int(agent_id)][0], signers_of_text(text)).keys)
    latest_signers: dict[int, tuple[str, ...]] = {}
    latest = "SELECT a.id, r.signers FROM agents a JOIN runs r ON r.id = a.last_run WHERE r.signers <> '[]'"
    for agent_id, text in conn.execute(latest).fetchall():
        latest_signers[int(agent_id)] = Identity.of("", agents[int(agent_id)][0], signers_of_text(text)).keys
    for group in _sharing_a_key(keys_of):
        survivor = max(group, key=lambda agent_id: agents[agent_id][1])
        others = [agent_id for agent_id in group if agent_id != survivor]
        for agent_id in others:
            conn.execute("UPDATE runs SET agent_id = ? WHERE agent_id = ?", (survivor, agent_id))
            conn.execute("DELETE FROM agents WHERE id = ?", (agent_id,))
            keys_of[survivor] |= keys_of.pop(agent_id)
            latest_signers.pop(agent_id, None)
        _kinds_of_runs(conn, survivor)
    for agent_id, keys in keys_of.items():
        if not keys:
            continue  # unsigned: recorded under its address, as it was
        primary = (latest_signers.get(agent_id) or sorted(keys))[0]
        conn.execute("UPDATE agents SET agent = ? WHERE id = ?", (primary, agent_id))
        for key in sorted(keys):
            conn.execute("INSERT INTO agent_keys(key, agent_id) VALUES (?, ?)", (key, agent_id))
    conn.execute(
        """INSERT INTO addresses(agent_id, address, runs, last_run)
           SELECT agent_id, address, COUNT(*), MAX(id) FROM runs GROUP BY agent_id, address"""
    )
    conn.execute(COUNTERS_OF_AGENTS)
    conn.execute(LATEST_OF_AGENTS)
    conn.execute(LATEST_ADDRESS_OF_AGENTS)


# What an agent's latest run says of where it is (kept on its row: `fleet()` reads agents alone).
LATEST_ADDRESS_OF_AGENTS = (
    "UPDATE agents SET address = (SELECT address FROM runs WHERE id = agents.last_run)"
    " WHERE last_run IS NOT NULL"
)
LATEST_ADDRESS_OF_AGENT = LATEST_ADDRESS_OF_AGENTS + " AND id = ?"


def _sharing_a_key(keys_of: dict[int, set[str]]) -> list[list[int]]:
    """The groups of two or more agents linked by shared signing identities (transitively)."""
    holder: dict[str, int] = {}
    parent: dict[int, int] = {agent_id: agent_id for agent_id in keys_of}

    def root(agent_id: int) -> int:
        while parent[agent_id] != agent_id:
            parent[agent_id] = parent[parent[agent_id]]
            agent_id = parent[agent_id]
        return agent_id

    for agent_id in sorted(keys_of):
        for key in sorted(keys_of[agent_id]):
            if key in holder:
                parent[root(agent_id)] = root(holder[key])
            else:
                holder[key] = agent_id
    groups: dict[int, list[int]] = {}
    for agent_id in keys_of:
        groups.setdefault(root(agent_id), []).append(agent_id)
    return [sorted(group) for group in groups.values() if len(group) > 1]


def addresses_by_agent(conn: Conn) -> dict[int, tuple[str, ...]]:
    """Every agent's addresses, the one its latest run was at first."""
    out: dict[int, list[str]] = {}
    for agent_id, address in conn.execute(
        "SELECT agent_id, address FROM addresses ORDER BY agent_id, last_run DESC"
    ).fetchall():
        out.setdefault(int(agent_id), []).append(address)
    return {agent_id: tuple(found) for agent_id, found in out.items()}
