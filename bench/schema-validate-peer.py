#!/usr/bin/env python3
"""Peer figure for bench/schema-validate.sh: what cloudformation-cli's
load_resource_spec does first, Python jsonschema Draft7Validator against the
cloudformation-cli meta-schema (read from ../shared), over the 1,665
published schemas, single process. Prints wall and CPU seconds.
Usage: python3 bench/schema-validate-peer.py  (from the repository root)"""
import glob, json, os, sys, time

from jsonschema import Draft7Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT7

meta = "../shared/corpus/resource-schemas/meta-schemas/cloudformation-cli"
corpus = "../shared/corpus/resource-schemas/corpus/aws-cloudformation-schema"
start, cpu0 = time.time(), time.process_time()
resources = []
for name in os.listdir(meta):
    with open(os.path.join(meta, name)) as f:
        doc = json.load(f)
    if name != "meta-schema.json":
        resources.append((doc["$id"], Resource(contents=doc, specification=DRAFT7)))
registry = Registry().with_resources(resources)
with open(os.path.join(meta, "provider.definition.schema.v1.json")) as f:
    validator = Draft7Validator(json.load(f), registry=registry)
invalid = 0
files = sorted(glob.glob(os.path.join(corpus, "*.json")))
for path in files:
    with open(path) as f:
        if not validator.is_valid(json.load(f)):
            invalid += 1
print(f"python jsonschema: {len(files)} schemas, {invalid} invalid, "
      f"{time.time() - start:.2f}s wall, {time.process_time() - cpu0:.2f}s cpu")
