#!/usr/bin/env python3
"""A real SMTP server for log_case.py (needs aiosmtpd: Debian python3-aiosmtpd).

usage: smtp_server.py mailbox|reject PORT MAILDIR
mailbox: aiosmtpd's Mailbox handler, every message into MAILDIR (with the
         X-MailFrom/X-RcptTo headers aiosmtpd adds from the envelope);
reject:  answers 550 to DATA.
Prints "ready" once listening on 127.0.0.1:PORT; stops when stdin closes."""
import sys

from aiosmtpd.controller import Controller
from aiosmtpd.handlers import Mailbox


class Reject:
    async def handle_DATA(self, server, session, envelope):
        return "550 5.7.1 rejected by the test server"


kind, port, maildir = sys.argv[1], int(sys.argv[2]), sys.argv[3]
handler = Mailbox(maildir) if kind == "mailbox" else Reject()
controller = Controller(handler, hostname="127.0.0.1", port=port)
controller.start()
print("ready", flush=True)
sys.stdin.read()
controller.stop()
