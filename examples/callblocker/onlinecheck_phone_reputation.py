#!/usr/bin/env python3
# callblocker online check against a phone-reputation service (docs/integrations/callblocker.md).
#
# callblocker runs it as Block::checkOnline() does (src/Block.cpp):
#   onlinecheck_phone_reputation.py --number <E.164> --<key>=<value>... 2>&1
# with one --<key>=<value> per field of the "phone_reputation" entry of the top-level
# "online_credentials" in settings.json (src/Settings.cpp), and reads the JSON printed here:
# "spam" (boolean, required), "name" (string) and "score" (integer), read only when spam is true.
# stderr is read as part of the answer (2>&1), so nothing but that JSON is ever written; a
# missing --url is a usage error (exit 2), which callblocker logs, never a silent "not spam".
# Standard library only.
import argparse
import json
import sys
import urllib.error
import urllib.parse
import urllib.request

USER_AGENT = "phone-reputation-callblocker/1"


def get(url, timeout):
    """(status, headers, text): status 0 when the service could not be reached in time."""
    request = urllib.request.Request(url, headers={"User-Agent": USER_AGENT})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, response.headers, response.read(4096).decode("utf-8", "replace")
    except urllib.error.HTTPError as error:  # 429, 503...: a problem, not a verdict
        return error.code, error.headers, ""
    except Exception:  # refused, timed out, reset: say nothing rather than guess
        return 0, {}, ""


def main():
    parser = argparse.ArgumentParser(description="Online spam check via phone-reputation")
    parser.add_argument("--number", required=True, help="number to check, E.164 (+33612345678)")
    parser.add_argument("--url", required=True, help="base URL of the service (online_credentials)")
    parser.add_argument("--wait", default="800", help="longest the service may take, ms")
    parser.add_argument("--warn_is_spam", default="false", help="true: count warn as spam too")
    args = parser.parse_args()

    wait_ms = int(args.wait) if args.wait.isdigit() else 800
    # Each request waits the service's own bound plus one second at most.
    timeout = wait_ms / 1000 + 1
    base = f"{args.url.rstrip('/')}/api/phone/{urllib.parse.quote(args.number, safe='')}"

    status, headers, body = get(f"{base}/verdict?wait={wait_ms}", timeout)
    verdict = body.strip() if status == 200 else "unknown"
    spam = verdict == "block" or (args.warn_is_spam.lower() == "true" and verdict == "warn")
    result = {"spam": spam, "score": 0, "name": ""}
    if spam:
        score = headers.get("X-Reputation-Score", "")
        result["score"] = int(score) if score.isdigit() else 0
        status, _, name = get(f"{base}/cid?wait={wait_ms}", timeout)
        result["name"] = name if status == 200 else ""
    sys.stdout.write(json.dumps(result, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
