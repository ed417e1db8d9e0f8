#!/usr/bin/env python3
"""The stories of docs/STORIES.md, run for real.

  stories.py curl BASE_URL       print each story's request as a curl command (make demo uses it)
  stories.py check BASE_URL      send each request and compare with the answer in the document
  stories.py update BASE_URL     write the answers into the document (review the diff!)
  stories.py readme-command N    print the README's N-th command (1: the demo, 2: the tests)
  stories.py e2e                 run the README's first command in the background, wait for
                                 /healthz, check every story, run the README's CLI lines, stop

An answer in the document may be partial: every member shown is checked, members left out are
not, and the string "…" matches any value. A request may carry headers on the lines after its
first (`Authorization: Bearer …`, `Content-Type: text/csv`); the body follows them. The demo
server takes writes with DEMO_TOKEN, so the stories that write run against it. A story that
writes must leave the same state when run twice (an upsert, rows that replace their hour): e2e
runs every story twice, once to check and once as the pasted curl command. Standard library only.
"""
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STORIES = os.path.join(ROOT, "docs", "STORIES.md")
README = os.path.join(ROOT, "README.md")
ANY = "…"
# The demo server's write token (scripts/demo.sh): for the demo on loopback, never a deployment.
DEMO_TOKEN = "demo-write-token-not-for-production"
HEADER = re.compile(r"^(Authorization|Content-Type): (.+)$")


def stories():
    """(title, method, path, headers, body, answer-block line range, expected text) per story."""
    lines = open(STORIES, encoding="utf-8").read().split("\n")
    found, title, i = [], "", 0
    while i < len(lines):
        if lines[i].startswith("### "):
            title = lines[i][4:]
        if lines[i] == "```http":
            j = i + 1
            while lines[j] != "```":
                j += 1
            method, path = lines[i + 1].split(" ", 1)
            headers, b = [], i + 2
            while b < j and HEADER.match(lines[b]):
                headers.append(HEADER.match(lines[b]).groups())
                b += 1
            body = "\n".join(lines[b:j])
            assert lines[j + 1] == "```json", f"line {j + 2}: the answer block must follow the request"
            k = j + 2
            while lines[k] != "```":
                k += 1
            found.append((title, method, path, headers, body, (j + 2, k), "\n".join(lines[j + 2:k])))
            i = k
        i += 1
    return found, lines


def content_type(headers, body):
    given = dict(headers).get("Content-Type")
    return given or ("application/json" if body.lstrip().startswith("{") else "text/plain")


def request(base, method, path, headers, body):
    data = body.encode() if body else None
    req = urllib.request.Request(base + path, data=data, method=method)
    for name, value in headers:
        req.add_header(name, value)
    if body:
        req.add_header("Content-Type", content_type(headers, body))
    try:
        with urllib.request.urlopen(req, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


def matches(expected, actual, where="answer"):
    """Problems where `actual` differs from `expected` (a partial answer)."""
    if expected == ANY:
        return []
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return [f"{where}: expected an object, got {json.dumps(actual)[:80]}"]
        problems = []
        for key, value in expected.items():
            if key not in actual:
                problems.append(f"{where}.{key}: missing")
            else:
                problems += matches(value, actual[key], f"{where}.{key}")
        return problems
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            return [f"{where}: expected {len(expected)} items, got {json.dumps(actual)[:120]}"]
        return [p for n, (e, a) in enumerate(zip(expected, actual)) for p in matches(e, a, f"{where}[{n}]")]
    if type(expected) != type(actual) and not (isinstance(expected, (int, float)) and isinstance(actual, (int, float))):
        return [f"{where}: expected {json.dumps(expected)}, got {json.dumps(actual)}"]
    return [] if expected == actual else [f"{where}: expected {json.dumps(expected, ensure_ascii=False)}, got {json.dumps(actual, ensure_ascii=False)}"]


def project(template, actual):
    """`actual` cut to the members `template` shows (for update)."""
    if template == ANY:
        return ANY
    if isinstance(template, dict) and isinstance(actual, dict):
        return {k: project(v, actual[k]) for k, v in template.items() if k in actual}
    if isinstance(template, list) and isinstance(actual, list) and len(template) == len(actual):
        return [project(t, a) for t, a in zip(template, actual)]
    return actual


def dump(value, indent=0):
    """JSON with objects one member per line and short arrays of scalars on one line."""
    pad = "  " * indent
    if isinstance(value, dict):
        flat = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
        if len(flat) + len(pad) <= 100:
            return flat
        items = [f'{pad}  {json.dumps(k, ensure_ascii=False)}: {dump(v, indent + 1)}' for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(value, list):
        flat = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
        if all(not isinstance(v, (dict, list)) for v in value) or len(flat) + len(pad) <= 100:
            return flat
        return "[\n" + ",\n".join(pad + "  " + dump(v, indent + 1) for v in value) + "\n" + pad + "]"
    return json.dumps(value, ensure_ascii=False)


def quote(text):
    """Shell quoting that reads well: double quotes around query text with single quotes in it."""
    if not any(c in text for c in '"$`\\!'):
        return '"' + text + '"' if ("'" in text or " " in text) else shlex.quote(text)
    return shlex.quote(text)


def curl(base, method, path, headers, body):
    command = ["curl", "-s", base + path] + (["-X", method] if method not in ("GET", "POST") else [])
    for name, value in headers:
        command += ["-H", f"{name}: {value}"]
    kind = content_type(headers, body)
    if body and kind == "application/json" and "Content-Type" not in dict(headers):
        command += ["-H", "Content-Type: application/json"]
    text = " ".join(quote(part) for part in command)
    if not body:
        return text
    if kind == "text/csv":
        # CSV keeps its lines: bash's $'…' quoting, with \n for each line end.
        escaped = body.replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\n")
        return text + " --data-binary $'" + escaped + "'"
    return text + " --data-binary " + quote(body.replace("\n", " "))


def check(base):
    failures = 0
    for title, method, path, headers, body, _, expected in stories()[0]:
        status, actual = request(base, method, path, headers, body)
        problems = matches(json.loads(expected), actual) if expected.strip() else ["the document has no answer"]
        print(f"{'ok  ' if not problems else 'FAIL'} {title}: {method} {path} → {status}")
        for problem in problems[:10]:
            print(f"       {problem}")
        failures += bool(problems)
    return failures


def update(base):
    found, lines = stories()
    # Asked in the document's order (a story may read what one before it wrote), spliced in
    # from the end so the line ranges stay valid.
    answers = []
    for _, method, path, headers, body, _, expected in found:
        _, actual = request(base, method, path, headers, body)
        answers.append(project(json.loads(expected), actual) if expected.strip() else actual)
    for (_, _, _, _, _, (start, end), expected), actual in reversed(list(zip(found, answers))):
        # A block whose answer did not change keeps its layout.
        if not expected.strip() or json.loads(expected) != actual:
            lines[start:end] = dump(actual).split("\n")
    open(STORIES, "w", encoding="utf-8").write("\n".join(lines))


def readme_commands():
    """The commands of the README's first sh block, without their comments."""
    text = open(README, encoding="utf-8").read()
    block = re.search(r"```sh\n(.*?)```", text, re.S).group(1)
    return [line.split("#")[0].strip() for line in block.strip().split("\n") if line.split("#")[0].strip()]


def readme_cli_lines():
    """The README's 'CLI in five lines' block: commands run against the demo store."""
    text = open(README, encoding="utf-8").read()
    block = re.search(r"<!-- cli -->\n```sh\n(.*?)```", text, re.S).group(1)
    return [line.split("  #")[0].strip() for line in block.strip().split("\n") if line.strip()]


def e2e():
    port = os.environ.get("VLTAVA_PORT", "18080")
    base = f"http://127.0.0.1:{port}"
    command = readme_commands()[0]
    os.makedirs(os.path.join(ROOT, ".build"), exist_ok=True)
    print(f"running the README's first command: {command} (VLTAVA_PORT={port})", flush=True)
    log = open(os.path.join(ROOT, ".build", "demo-e2e.log"), "w")
    demo = subprocess.Popen(command, shell=True, cwd=ROOT, env={**os.environ, "VLTAVA_PORT": port},
                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    started = time.time()
    try:
        while True:
            if demo.poll() is not None:
                print(open(log.name).read()[-3000:])
                sys.exit(f"the demo exited with status {demo.returncode} before the server answered")
            try:
                with urllib.request.urlopen(base + "/healthz", timeout=2) as response:
                    if response.status == 200:
                        break
            except (urllib.error.URLError, ConnectionError, OSError):
                pass
            if time.time() - started > 1200:
                sys.exit("no /healthz within 20 minutes")
            time.sleep(1)
        print(f"/healthz answered {time.time() - started:.0f} s after the start", flush=True)
        failures = check(base)
        # The CLI lines work on a store of their own, as a newcomer's would.
        scratch = os.path.join(ROOT, ".build", "readme-cli.gpkg")
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(scratch + suffix):
                os.remove(scratch + suffix)
        env = {**os.environ, "VLTAVA_DB": scratch, "PATH": os.path.join(ROOT, ".build", os.environ.get("VLTAVA_BUILD", "release")) + ":" + os.environ["PATH"]}
        for line in readme_cli_lines():
            result = subprocess.run(line, shell=True, cwd=ROOT, env=env, capture_output=True, text=True)
            ok = result.returncode == 0 and result.stdout.strip()
            print(f"{'ok  ' if ok else 'FAIL'} README CLI: {line}")
            if not ok:
                print(result.stdout[-1000:], result.stderr[-1000:])
                failures += 1
        # The demo's printed requests are pasteable: each runs in bash and gets the documented answer.
        output = open(log.name).read()
        for title, method, path, headers, body, _, expected in stories()[0]:
            command = curl(base, method, path, headers, body)
            if command not in output:
                print(f"FAIL the demo did not print the request of: {title}")
                failures += 1
                continue
            pasted = subprocess.run(["bash", "-c", command], capture_output=True, text=True)
            problems = matches(json.loads(expected), json.loads(pasted.stdout or "null"))
            print(f"{'ok  ' if not problems else 'FAIL'} pasted: {title}")
            for problem in problems:
                print(f"       {problem}")
            failures += bool(problems)
        print("all stories answered as documented" if not failures else f"{failures} failure(s)")
        return failures
    finally:
        # The demo may have exited already (a failed build): its error is the one to report.
        try:
            os.killpg(demo.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        demo.wait(timeout=30)


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    if mode == "curl":
        for title, method, path, headers, body, _, _ in stories()[0]:
            print(f"# {title}\n{curl(sys.argv[2], method, path, headers, body)}\n")
    elif mode == "check":
        sys.exit(1 if check(sys.argv[2]) else 0)
    elif mode == "update":
        update(sys.argv[2])
    elif mode == "demo-token":
        print(DEMO_TOKEN)
    elif mode == "readme-command":
        print(readme_commands()[int(sys.argv[2]) - 1])
    elif mode == "e2e":
        sys.exit(1 if e2e() else 0)
    else:
        sys.exit(__doc__)
