#!/usr/bin/env python3
"""Checks the sandbox's API description and the answers the test suites saw against it.

1. The description (OpenAPI 3.1) must be valid against the OpenAPI 3.1 meta-schema.
2. Each exchange a sandbox logged (FULFILLSYNC_SANDBOX_EXCHANGE_DIR/*.jsonl, one JSON object a
   line: method, target, status, content_type, headers, body, fault) is checked against the
   operation it answered: the status is documented, the body is valid against the schema, and the
   documented required headers are present. Answers whose body was broken on purpose (truncated,
   malformed) or never sent (drop_after) are exempt. Requests that name no operation of the
   description (unknown paths, other methods, the admin and OAuth paths) are not API answers.

The logs are checked a file per process, one process per core: the suites leave hundreds of MB.
A body is validated once per form: the same schema and the same text with every run of digits read
as one (an order answered again with other ids, times and quantities). A page is validated with one
item of each form, so a page pulled again, or another page of like orders, costs no more. A later body
or item of a form gets the first one's errors: only a fault that changes digits alone (an invalid
date, a number out of range) can go unseen after its first. Beyond a schema's first 200 forms in one
log, one new form in 10 is validated and the rest are counted as sampled out.

Uses Debian's python3-jsonschema and python3-yaml only.
"""
import argparse
import datetime
import glob
import hashlib
import json
import multiprocessing
import os
import re
import sys

import jsonschema
import yaml

VERSIONS = ("2025-07", "2026-01", "2026-07")
DIGITS = re.compile(r"[0-9]+")
FORMS_VALIDATED_IN_FULL = 200
THEN_ONE_FORM_IN = 10
EXEMPT_FAULTS = ("drop_after", "truncated", "malformed")
METHODS = ("get", "put", "post", "delete", "patch", "head", "options")


def format_checker():
    checker = jsonschema.FormatChecker()

    @checker.checks("date-time", raises=ValueError)
    def is_date_time(value):
        if not isinstance(value, str):
            return True
        if not re.match(r"^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$", value):
            raise ValueError("not an RFC 3339 date-time")
        datetime.datetime.fromisoformat(value.replace("z", "Z").replace("Z", "+00:00"))
        return True

    return checker


def pointer(*parts):
    return "#/" + "/".join(str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def form_digest(text):
    return hashlib.blake2b(DIGITS.sub("0", text).encode("utf-8", "surrogatepass"), digest_size=16).digest()


def one_item_per_form(body):
    """The body with each list of a page (the body itself, or a member of it) cut to the first item of
    each form, and the function that maps a path in the cut body back to the body's."""
    kept = {}  # the list's member name (None: the body) -> original index of each item kept

    def cut(name, items):
        first_of_form = {}
        for index, item in enumerate(items):
            first_of_form.setdefault(form_digest(json.dumps(item, sort_keys=True)), index)
        kept[name] = sorted(first_of_form.values())
        return [items[index] for index in kept[name]]

    if isinstance(body, list):
        body = cut(None, body)
    elif isinstance(body, dict):
        body = {name: cut(name, value) if isinstance(value, list) else value for name, value in body.items()}

    def original_index(path):
        path = list(path)
        at = 0 if None in kept else 1
        if len(path) > at and (at == 0 or path[0] in kept) and isinstance(path[at], int):
            path[at] = kept[None if at == 0 else path[0]][path[at]]
        return path

    return body, original_index


class Description:
    def __init__(self, document):
        self.document = document
        self.checker = format_checker()
        self.validators = {}
        self.body_errors = {}  # (schema ref, digest of the body's form) -> [(message, at, schema path)]
        self.forms_in_log = {}  # schema ref -> forms seen in the log being checked
        self.operations = []  # (regex, literal length, path, method, operation)
        for path, item in document["paths"].items():
            regex = "^" + re.sub(r"\\\{[^}]*\\\}", "[^/:]+", re.escape(path)) + "$"
            literal = len(re.sub(r"\{[^}]*\}", "", path))
            for method, operation in item.items():
                if method in METHODS:
                    self.operations.append((re.compile(regex), literal, path, method, operation))
        self.operations.sort(key=lambda entry: -entry[1])

    def count(self):
        return len(self.operations)

    def find(self, method, path):
        for regex, _, template, op_method, operation in self.operations:
            if op_method == method.lower() and regex.match(path):
                return template, operation
        return None, None

    def validator(self, ref):
        # The description is the root resource, so local $refs resolve; its non-keyword members
        # (openapi, info, paths, components) are ignored by JSON Schema. One validator per schema.
        if ref not in self.validators:
            schema = dict(self.document)
            schema["$ref"] = ref
            self.validators[ref] = jsonschema.Draft202012Validator(schema, format_checker=self.checker)
        return self.validators[ref]

    def body_errors_of(self, ref, text):
        """The body's errors against the schema, or None when its form was sampled out."""
        key = (ref, form_digest(text))
        if key not in self.body_errors:
            try:
                body = json.loads(text)
            except ValueError as error:
                self.body_errors[key] = [("body is not JSON (%s)" % error, "(body)", "")]
                return self.body_errors[key]
            body, original_index = one_item_per_form(body)
            reduced_key = (ref, form_digest(json.dumps(body, sort_keys=True)))
            if reduced_key not in self.body_errors:
                forms = self.forms_in_log[ref] = self.forms_in_log.get(ref, 0) + 1
                if forms > FORMS_VALIDATED_IN_FULL and forms % THEN_ONE_FORM_IN:
                    return None
                self.body_errors[reduced_key] = [
                    (error.message[:200], "/".join(str(p) for p in original_index(error.absolute_path)) or "(body)",
                     "/".join(str(p) for p in error.absolute_schema_path))
                    for error in self.validator(ref).iter_errors(body)]
            self.body_errors[key] = self.body_errors[reduced_key]
        return self.body_errors[key]

    def resolve(self, node):
        while isinstance(node, dict) and "$ref" in node:
            target = self.document
            for part in node["$ref"][2:].split("/"):
                target = target[part.replace("~1", "/").replace("~0", "~")]
            node = target
        return node


def check_description(document, meta_schema_path):
    with open(meta_schema_path, encoding="utf-8") as file:
        meta = json.load(file)
    errors = sorted(jsonschema.Draft202012Validator(meta).iter_errors(document), key=lambda e: list(e.path))
    return ["description: %s: %s" % ("/".join(str(p) for p in error.path) or "(root)", error.message) for error in errors]


def check_exchange(description, where, exchange, figures):
    method, target, status = exchange["method"], exchange["target"], exchange["status"]
    path = target.split("?", 1)[0]
    parts = path.split("/", 2)
    if len(parts) < 3 or parts[1] not in VERSIONS:
        figures["not_api"] += 1
        return []
    version, rest = parts[1], "/" + parts[2]
    template, operation = description.find(method, rest)
    if operation is None or operation.get("x-since", "0") > version:
        figures["not_api"] += 1
        return []
    if exchange.get("fault") in EXEMPT_FAULTS:
        figures["exempt"] += 1
        return []
    figures["validated"] += 1
    request = "%s %s" % (method, target)
    answer = "%d %s" % (status, exchange["body"][:300])
    op_pointer = ["paths", template, method.lower(), "responses"]
    responses = operation.get("responses", {})
    key = str(status) if str(status) in responses else ("default" if "default" in responses else None)
    if key is None:
        return ["%s: %s -> status %d is not documented for %s %s (%s)\n    answer: %s"
                % (where, request, status, method, template, pointer(*op_pointer), answer)]
    response = description.resolve(responses[key])
    failures = []
    headers = {name.lower(): value for name, value in exchange.get("headers", {}).items()}
    for name, header in (response.get("headers") or {}).items():
        if description.resolve(header).get("required") and name.lower() not in headers:
            failures.append("%s: %s -> documented header %s is missing (%s)\n    answer: %s"
                            % (where, request, name, pointer(*op_pointer, key, "headers", name), answer))
    content = response.get("content") or {}
    if not content:
        return failures
    media = exchange.get("content_type", "").split(";")[0].strip()
    if media not in content:
        media = next(iter(content))
    base = responses[key].get("$ref") or pointer(*op_pointer, key)
    schema_ref = base + pointer("content", media, "schema")[1:]
    errors = description.body_errors_of(schema_ref, exchange["body"])
    if errors is None:
        figures["sampled_out"] += 1
        return failures
    for message, at, schema_path in errors:
        failures.append("%s: %s -> %s: %s at %s (schema %s/%s)\n    answer: %s"
                        % (where, request, status, message, at, schema_ref, schema_path, answer))
    return failures


# The description each worker process checks against, built once per process.
worker_description = None


def start_worker(document):
    global worker_description
    worker_description = Description(document)


def check_log(log):
    """The failures and figures of one exchange log."""
    failures = []
    figures = {"validated": 0, "sampled_out": 0, "exempt": 0, "not_api": 0}
    worker_description.forms_in_log = {}
    with open(log, encoding="utf-8", errors="replace") as file:
        for number, line in enumerate(file, 1):
            if not line.strip():
                continue
            where = "%s:%d" % (os.path.basename(log), number)
            try:
                exchange = json.loads(line)
            except ValueError:
                failures.append("%s: not a JSON line (a sandbox killed mid-write?)" % where)
                continue
            failures.extend(check_exchange(worker_description, where, exchange, figures))
    return log, failures, figures


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--description", required=True)
    parser.add_argument("--meta-schema", required=True, help="the OpenAPI 3.1 meta-schema (JSON)")
    parser.add_argument("--exchanges", help="directory of *.jsonl exchange logs")
    parser.add_argument("--require-exchanges", action="store_true", help="fail when no exchange was logged")
    args = parser.parse_args()

    with open(args.description, encoding="utf-8") as file:
        document = yaml.safe_load(file)
    failures = check_description(document, args.meta_schema)
    description = Description(document)
    figures = {"validated": 0, "sampled_out": 0, "exempt": 0, "not_api": 0}
    if args.exchanges:
        # The largest logs first, so that no process is left with a large one at the end.
        logs = sorted(glob.glob(os.path.join(args.exchanges, "*.jsonl")), key=os.path.getsize, reverse=True)
        by_log = {}
        with multiprocessing.Pool(os.cpu_count() or 1, initializer=start_worker, initargs=(document,)) as pool:
            for log, log_failures, log_figures in pool.imap_unordered(check_log, logs):
                by_log[log] = log_failures
                for name, count in log_figures.items():
                    figures[name] += count
        for log in sorted(by_log):
            failures.extend(by_log[log])
    answers_failed = len({f.split(" -> ", 1)[0] for f in failures if " -> " in f})
    for failure in failures:
        print("FAIL " + failure)
    print("operations described: %d" % description.count())
    print("answers validated: %d, failed: %d, bodies sampled out: %d, exempt (truncated/malformed/dropped): %d, "
          "not API operations: %d" % (figures["validated"], answers_failed, figures["sampled_out"], figures["exempt"],
                                      figures["not_api"]))
    if args.require_exchanges and figures["validated"] == 0:
        print("FAIL no exchange was validated: were the suites run with FULFILLSYNC_SANDBOX_EXCHANGE_DIR?")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
