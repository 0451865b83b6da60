"""The client: a thread posting the next legal action until the kill, and the ledger of what
the server acknowledged."""

from __future__ import annotations

import http.client
import json
import threading
from dataclasses import dataclass, field
from typing import Any

from crash.serve import CYCLE, NEW_TABLE, PIN, HarnessError, get


@dataclass(frozen=True)
class Ack:
    """An action the server acknowledged (2xx): it must survive every crash."""

    table: str
    seq: int
    action: dict[str, Any]


@dataclass
class Ledger:
    """What the client knows for sure, across every round."""

    tables: list[str] = field(default_factory=list)
    acks: list[Ack] = field(default_factory=list)
    cut_mid_request: int = 0  #: requests sent whose answer never came (the kill cut them)
    refused: int = 0  #: non-2xx answers (must stay 0: every action posted is legal)


class Poster(threading.Thread):
    """Posts the next legal action of the current table until the server dies."""

    def __init__(self, port: int, ledger: Ledger) -> None:
        super().__init__(daemon=True)
        self.port = port
        self.ledger = ledger
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            self._loop()
        except (ConnectionError, http.client.HTTPException, OSError):
            pass  # the kill: expected
        except BaseException as exc:  # a harness bug or a server answer we did not expect
            self.error = exc

    def _loop(self) -> None:
        ledger = self.ledger
        table = ledger.tables[-1] if ledger.tables else None
        seq = get(self.port, f"/api/tables/{table}")["seq"] if table else 0
        over = table is None or get(self.port, f"/api/tables/{table}")["over"]
        while True:
            if over:
                status, body = self._post("/api/tables", NEW_TABLE)
                if status != 201:
                    raise HarnessError(f"new table refused: {status} {body}")
                table, seq, over = body["table"], 0, False
                ledger.tables.append(table)
                continue
            action = CYCLE[seq % len(CYCLE)]
            status, body = self._post(f"/api/tables/{table}/actions", action)
            if status == 201:
                ledger.acks.append(Ack(str(table), body["seq"], body["action"]))
                seq, over = body["seq"], body["table"]["over"]
            elif status == 409 and get(self.port, f"/api/tables/{table}")["over"]:
                over = True  # the game ended: start another
            else:
                ledger.refused += 1
                raise HarnessError(f"{action} refused: {status} {body}")

    def _post(self, path: str, body: Any) -> tuple[int, Any]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            conn.connect()
        except OSError:
            conn.close()
            raise
        sent = False
        try:
            data = json.dumps(body)
            headers = {"X-Dicepad-Pin": PIN, "Content-Type": "application/json"}
            conn.request("POST", path, body=data, headers=headers)
            sent = True
            resp = conn.getresponse()
            return resp.status, json.loads(resp.read())
        except (ConnectionError, http.client.HTTPException, OSError):
            if sent:
                self.ledger.cut_mid_request += 1
            raise
        finally:
            conn.close()
