#!/usr/bin/env python3
"""Runs one logging test: starts the real servers it asks for, runs the
command with the environment pointing pmixpp's plog channels at them, and
checks exit status, output, syslog records and mail.

usage: log_case.py [options] -- command...
  --rc N | --nonzero             expected exit status (default 0)
  --count REGEX N                exactly N stdout lines match
  --count-stderr REGEX N         exactly N stderr lines match
  --env NAME=VALUE               set in the command's environment
  --syslog [rfc3164|rfc5424]     start rsyslogd (private configuration, socket and
                                 output file in a temporary directory) and set
                                 PMIX_MCA_plog_syslog_socket (and _format)
  --syslog-unreachable           PMIX_MCA_plog_syslog_socket names no socket
  --record REGEX N               exactly N syslog records match; each record is
                                 "facility,severity,programname,message"
  --smtp mailbox|reject|refuse|silent
                                 an SMTP server on 127.0.0.1 (aiosmtpd's Mailbox;
                                 aiosmtpd answering 550 to DATA; a port nobody
                                 listens on; a socket that accepts and never
                                 speaks) and PMIX_MCA_plog_email_server/_port
  --mail REGEX N                 exactly N delivered messages match REGEX (searched
                                 in the whole message: headers, X-RcptTo, body)
  --release-after REGEX N        (silent) close the silent server's connections
                                 once N stdout lines matched REGEX; the
                                 command finds in PMIXPP_TEST_GO_FILE a file
                                 that appears once the silent server accepted
                                 a connection
Every wait is bounded: the ctest TIMEOUT, pmixrun's --timeout, and 20 s for a
server to start or a record to arrive (a miss fails the test)."""
import mailbox
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BOUND = 20.0  # seconds: a server that does not come up, a record that does not arrive


def die(msg):
    print("log_case.py: " + msg, file=sys.stderr)
    sys.exit(1)


def wait_for(pred, what):
    deadline = time.monotonic() + BOUND
    while not pred():
        if time.monotonic() > deadline:
            die(f"gave up after {BOUND:.0f} s waiting for {what}")
        time.sleep(0.05)


def free_port():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


RSYSLOG_CONF = """global(workDirectory="{dir}")
module(load="imuxsock" SysSock.Use="off")
input(type="imuxsock" Socket="{sock}" UseSpecialParser="off" ParseHostname="on"
      RateLimit.Interval="0")
template(name="pmixtest" type="string"
         string="%syslogfacility-text%,%syslogseverity-text%,%programname%,%msg:::drop-last-lf%\\n")
*.* action(type="omfile" file="{out}" template="pmixtest")
"""


class Rsyslog:
    def __init__(self, tmp):
        rsyslogd = shutil.which("rsyslogd") or "/usr/sbin/rsyslogd"
        if not os.path.exists(rsyslogd):
            die("rsyslogd not found: install rsyslog (scripts/install-deps.sh)")
        self.dir = os.path.join(tmp, "rsyslog")
        os.mkdir(self.dir)
        self.sock = os.path.join(self.dir, "log.sock")
        self.out = os.path.join(self.dir, "records")
        conf = os.path.join(self.dir, "rsyslog.conf")
        with open(conf, "w") as f:
            f.write(RSYSLOG_CONF.format(dir=self.dir, sock=self.sock, out=self.out))
        self.proc = subprocess.Popen(
            [rsyslogd, "-n", "-f", conf, "-i", os.path.join(self.dir, "rsyslogd.pid")],
            stdout=subprocess.DEVNULL, stderr=open(os.path.join(self.dir, "stderr"), "w"))
        wait_for(lambda: os.path.exists(self.sock) or self.proc.poll() is not None,
                 "rsyslogd's socket")
        if self.proc.poll() is not None:
            die("rsyslogd exited: " + open(os.path.join(self.dir, "stderr")).read())

    def records(self):
        try:
            with open(self.out) as f:
                lines = [l.rstrip("\n").split(",", 3) for l in f]
            # RFC 3164's MSG keeps the space after "TAG:"; 5424's has none.
            return [",".join(p[:3] + [p[3].lstrip()]) for p in lines if len(p) == 4]
        except FileNotFoundError:
            return []

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=BOUND)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def python_with_aiosmtpd():
    for exe in (sys.executable, "/usr/bin/python3"):
        if exe and os.path.exists(exe) and subprocess.run(
                [exe, "-c", "import aiosmtpd"], capture_output=True).returncode == 0:
            return exe
    die("no Python with aiosmtpd: install python3-aiosmtpd (scripts/install-deps.sh)")


class Smtp:
    def __init__(self, kind, tmp):
        self.kind, self.proc, self.listener, self.conns = kind, None, None, []
        self.go_file = os.path.join(tmp, "accepted")
        self.maildir = os.path.join(tmp, "maildir")
        self.port = free_port()
        if kind in ("mailbox", "reject"):
            self.proc = subprocess.Popen(
                [python_with_aiosmtpd(), os.path.join(HERE, "smtp_server.py"), kind,
                 str(self.port), self.maildir],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            ready = []
            t = threading.Thread(target=lambda: ready.append(self.proc.stdout.readline()),
                                 daemon=True)
            t.start()
            wait_for(lambda: ready, "the SMTP server to start")
            if not ready[0].startswith("ready"):
                die("the SMTP server did not start: " + ready[0])
        elif kind == "silent":
            self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            self.listener.bind(("127.0.0.1", 0))
            self.port = self.listener.getsockname()[1]
            self.listener.listen(8)
            threading.Thread(target=self._accept, daemon=True).start()
        elif kind != "refuse":  # refuse: a free port that nobody listens on
            die("unknown --smtp kind " + kind)

    def _accept(self):
        while True:
            try:
                c, _ = self.listener.accept()
            except OSError:
                return
            self.conns.append(c)  # held open, never spoken to
            if self.go_file:
                open(self.go_file, "w").close()

    def release(self):
        for c in self.conns:
            c.close()
        if self.listener:
            self.listener.close()

    def messages(self):
        if not os.path.isdir(self.maildir):
            return []
        return [m.as_string() for m in mailbox.Maildir(self.maildir, create=False)]

    def stop(self):
        self.release()
        if self.proc:
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=BOUND)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def main():
    args = sys.argv[1:]
    expect_rc, nonzero, counts, err_counts, records, mails = 0, False, [], [], [], []
    env = dict(os.environ)
    syslog, unreachable, smtp_kind, release = None, False, None, None
    while args and args[0] != "--":
        a = args.pop(0)
        if a == "--rc":
            expect_rc = int(args.pop(0))
        elif a == "--nonzero":
            nonzero = True
        elif a == "--count":
            counts.append((re.compile(args.pop(0)), int(args.pop(0))))
        elif a == "--count-stderr":
            err_counts.append((re.compile(args.pop(0)), int(args.pop(0))))
        elif a == "--env":
            name, _, value = args.pop(0).partition("=")
            env[name] = value
        elif a == "--syslog":
            syslog = "rfc3164"
            if args and args[0] in ("rfc3164", "rfc5424"):
                syslog = args.pop(0)
        elif a == "--syslog-unreachable":
            unreachable = True
        elif a == "--record":
            records.append((re.compile(args.pop(0)), int(args.pop(0))))
        elif a == "--smtp":
            smtp_kind = args.pop(0)
        elif a == "--mail":
            mails.append((re.compile(args.pop(0), re.S | re.M), int(args.pop(0))))
        elif a == "--release-after":
            release = (re.compile(args.pop(0)), int(args.pop(0)))
        else:
            die(f"unknown option {a}")
    cmd = args[1:]
    tmp = tempfile.mkdtemp(prefix="pmixpp-log-")
    rsyslog = smtp = None
    try:
        if syslog:
            rsyslog = Rsyslog(tmp)
            env["PMIX_MCA_plog_syslog_socket"] = rsyslog.sock
            env["PMIX_MCA_plog_syslog_format"] = syslog
        if unreachable:
            env["PMIX_MCA_plog_syslog_socket"] = os.path.join(tmp, "no-daemon-here")
        if smtp_kind:
            smtp = Smtp(smtp_kind, tmp)
            env["PMIX_MCA_plog_email_server"] = "127.0.0.1"
            env["PMIX_MCA_plog_email_port"] = str(smtp.port)
            env["PMIXPP_TEST_GO_FILE"] = smtp.go_file
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=env)
        out_lines, err_text = [], []
        t = threading.Thread(target=lambda: err_text.append(proc.stderr.read()), daemon=True)
        t.start()
        released = False
        for line in proc.stdout:
            out_lines.append(line.rstrip("\n"))
            sys.stdout.write(line)
            if release and not released and \
                    sum(1 for l in out_lines if release[0].search(l)) >= release[1]:
                smtp.release()
                released = True
        proc.wait()
        t.join()
        err = err_text[0] if err_text else ""
        sys.stderr.write(err)
        problems = []
        if nonzero:
            if proc.returncode == 0:
                problems.append("expected a non-zero exit status, got 0")
        elif proc.returncode != expect_rc:
            problems.append(f"expected exit status {expect_rc}, got {proc.returncode}")
        if release and not released:
            problems.append(f"never saw {release[1]} lines matching {release[0].pattern!r}")
        for regex, n in counts:
            got = sum(1 for l in out_lines if regex.search(l))
            if got != n:
                problems.append(f"expected {n} stdout lines matching {regex.pattern!r}, got {got}")
        for regex, n in err_counts:
            got = sum(1 for l in err.splitlines() if regex.search(l))
            if got != n:
                problems.append(f"expected {n} stderr lines matching {regex.pattern!r}, got {got}")
        if records:
            # The records a delivered entry produces arrive shortly after the
            # call returned: wait until every positive expectation is met.
            def enough():
                recs = rsyslog.records()
                return all(sum(1 for r in recs if rx.search(r)) >= n for rx, n in records)
            try:
                wait_for(enough, "the expected syslog records")
            except SystemExit:
                pass
            recs = rsyslog.records()
            print("log_case.py: syslog records:\n  " + "\n  ".join(recs), file=sys.stderr)
            for regex, n in records:
                got = sum(1 for r in recs if regex.search(r))
                if got != n:
                    problems.append(f"expected {n} syslog records matching {regex.pattern!r}, got {got}")
        if mails:
            msgs = smtp.messages()
            print("log_case.py: messages:\n" + "\n----\n".join(msgs), file=sys.stderr)
            for regex, n in mails:
                got = sum(1 for m in msgs if regex.search(m))
                if got != n:
                    problems.append(f"expected {n} messages matching {regex.pattern!r}, got {got}")
        for p in problems:
            print("log_case.py: " + p, file=sys.stderr)
        return 1 if problems else 0
    finally:
        if rsyslog:
            rsyslog.stop()
        if smtp:
            smtp.stop()
        shutil.rmtree(tmp, ignore_errors=True)


sys.exit(main())
