#!/usr/bin/env python3
"""Drives a web page in headless Chromium through chromedriver (W3C WebDriver over HTTP, with
nothing but Python's standard library), as the web tests of aqjack do (docs/WEB.md).

  browser-check.py URL --wait ID [--script JS] [--async-script JS] [--read ID]... [--samples N]
                   [--screenshot PNG] [--click ID] [--after ID] [--timeout SECONDS]

Opens URL, waits until element ID shows a number, runs --script (a function body; its return
value is printed as "script"), runs --async-script (a function body whose last argument is the
callback it calls with its result, within 60 s; printed as "async"), then reads each --read element's text N times
200 ms apart, writes a screenshot, clicks --click, waits 1 s and reads --after. Prints one JSON
object: {"reads": {ID: [text, ...]}, "after": text, "screenshot": PATH, "console": [...]}.
Exit 1 with a message on standard error when the page never shows a number or a step fails.
"""
import argparse
import base64
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

ELEMENT = "element-6066-11e4-a52e-4f735466cecf"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Driver:
    def __init__(self, port):
        self.base = f"http://127.0.0.1:{port}"

    def call(self, method, path, body=None):
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.base + path, data=data, method=method,
                                         headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=60) as reply:
                return json.loads(reply.read() or b"{}").get("value")
        except urllib.error.HTTPError as error:
            raise RuntimeError(f"{method} {path}: {error.code} {error.read()[:300]!r}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("--wait", required=True)
    parser.add_argument("--script")
    parser.add_argument("--async-script")
    parser.add_argument("--read", action="append", default=[])
    parser.add_argument("--samples", type=int, default=5)
    parser.add_argument("--screenshot")
    parser.add_argument("--click")
    parser.add_argument("--after")
    parser.add_argument("--timeout", type=float, default=30)
    args = parser.parse_args()

    chromedriver = shutil.which("chromedriver") or "/usr/lib/chromium/chromedriver"
    port = free_port()
    profile = tempfile.mkdtemp(prefix="aqjack-chromium-")
    log = open(os.path.join(profile, "chromedriver.log"), "w")
    server = subprocess.Popen([chromedriver, f"--port={port}"], stdout=log, stderr=log)
    driver = Driver(port)
    session = None
    try:
        for _ in range(200):
            try:
                if driver.call("GET", "/status").get("ready"):
                    break
            except Exception:
                pass
            time.sleep(0.05)
        options = {"args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                            "--window-size=1000,640", f"--user-data-dir={profile}/profile"]}
        if os.path.exists("/usr/bin/chromium"):
            options["binary"] = "/usr/bin/chromium"
        created = driver.call("POST", "/session", {"capabilities": {"alwaysMatch": {
            "goog:chromeOptions": options, "goog:loggingPrefs": {"browser": "ALL"}}}})
        session = created["sessionId"]
        driver.call("POST", f"/session/{session}/url", {"url": args.url})

        def text(element_id):
            found = driver.call("POST", f"/session/{session}/element", {"using": "css selector", "value": "#" + element_id})
            return driver.call("GET", f"/session/{session}/element/{found[ELEMENT]}/text")

        deadline = time.time() + args.timeout
        while True:
            try:
                float(text(args.wait))
                break
            except Exception:
                if time.time() > deadline:
                    raise RuntimeError(f"#{args.wait} never showed a number within {args.timeout} s")
                time.sleep(0.1)
        result = {}
        if args.script:
            result["script"] = driver.call("POST", f"/session/{session}/execute/sync", {"script": args.script, "args": []})
            time.sleep(0.5)
        if args.async_script:
            driver.call("POST", f"/session/{session}/timeouts", {"script": 60000})
            result["async"] = driver.call("POST", f"/session/{session}/execute/async", {"script": args.async_script, "args": []})
        reads = {element_id: [] for element_id in args.read}
        for _ in range(args.samples):
            for element_id in args.read:
                reads[element_id].append(text(element_id))
            time.sleep(0.2)
        result["reads"] = reads
        if args.screenshot:
            png = base64.b64decode(driver.call("GET", f"/session/{session}/screenshot"))
            with open(args.screenshot, "wb") as file:
                file.write(png)
            result["screenshot"] = args.screenshot
        if args.click:
            found = driver.call("POST", f"/session/{session}/element", {"using": "css selector", "value": "#" + args.click})
            driver.call("POST", f"/session/{session}/element/{found[ELEMENT]}/click", {})
            time.sleep(1)
        if args.after:
            result["after"] = text(args.after)
        try:
            result["console"] = [entry.get("message") for entry in driver.call("POST", f"/session/{session}/se/log", {"type": "browser"}) or []]
        except Exception:
            result["console"] = []
        print(json.dumps(result))
        return 0
    except Exception as error:
        print(f"browser-check.py: {error}", file=sys.stderr)
        return 1
    finally:
        if session:
            try:
                driver.call("DELETE", f"/session/{session}")
            except Exception:
                pass
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
        shutil.rmtree(profile, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
