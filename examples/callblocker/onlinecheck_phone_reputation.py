#!/usr/bin/env python3
# callblocker online check against a phone-reputation service (docs/integrations/callblocker.md).
# Prints {"spam": bool, "score": int, "name": str} as callblocker's onlinecheck scripts do.
# Standard library only.
import argparse
import json
import sys
import urllib.parse
import urllib.request


def get(url, timeout):
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status, response.headers, response.read().decode("utf-8")
    except Exception:  # the service unreachable or slow: say nothing rather than guess
        return 0, {}, ""


def main():
    parser = argparse.ArgumentParser(description="Online spam check via phone-reputation")
    parser.add_argument("--number", required=True, help="number to check, E.164 (+33612345678)")
    parser.add_argument("--url", default="http://127.0.0.1:3000", help="base URL of the service")
    parser.add_argument("--wait", default="2000", help="longest the service may take, ms")
    parser.add_argument("--warn-is-spam", action="store_true", help="count warn as spam too")
    parser.add_argument("--debug", action="store_true")
    args = parser.parse_args()

    base = f"{args.url.rstrip('/')}/api/phone/{urllib.parse.quote(args.number, safe='')}"
    timeout = int(args.wait) / 1000 + 2
    status, headers, body = get(f"{base}/verdict?wait={args.wait}", timeout)
    verdict = body.strip() if status == 200 else "unknown"
    score_header = headers.get("X-Reputation-Score", "none") if status == 200 else "none"
    score = int(score_header) if score_header.isdigit() else 0
    status, _, name = get(f"{base}/cid?wait={args.wait}", timeout)

    spam = verdict == "block" or (args.warn_is_spam and verdict == "warn")
    result = {"spam": spam, "score": score, "name": name if status == 200 else ""}
    sys.stdout.write(json.dumps(result, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
