#!/usr/bin/env python3
"""Fails when a file of the library includes a header of a higher layer (docs/architecture.md).

The layers, ground first. A file may include headers of its own layer and of the layers before it; the public
headers (include/chorus/) are below everything. The emulators (emulation/) come last, so that no layer includes
them, and may include only the layers they emulate for. Folders beside the stack (perf, launcher, tests, fuzz) are
free.
Usage: check_layers.py [SOURCE_DIR]; prints each violation as FILE:LINE: LAYER includes HEADER (LAYER2).
"""
import os
import re
import sys

# (layer name, path prefix): the first matching prefix names a file's layer, so sub-layers come before the folder.
LAYERS = [
    ("core", "core/"),                  # errors, logging, config, datatypes, the call description
    ("security", "core/security/"),
    ("bootstrap", "core/bootstrap/"),
    ("metrics", "core/metrics/"),       # Prometheus's text format, the HTTP server it is scraped from
    ("reduce", "reduce/"),
    ("device", "device/"),
    ("topology", "topology/"),
    ("transports", "transports/"),
    ("algorithms", "algorithms/"),
    ("flight", "src/flight/"),          # the flight recorder, its dumps, the inspect listener: below the engine
    ("comm", "src/comm/"),
    ("api", "src/api/"),
    ("emulation", "emulation/"),        # the software verbs device, the emulated GPU runtime: not in libchorus.so
]
ORDER = [name for name, _ in LAYERS]
# Lower layers a layer still may not include: an algorithm never names a transport or the device runtime.
# The emulators stand beside the stack: they see what they emulate for (device, transports) and what that stands on.
FORBIDDEN = {"algorithms": {"transports", "device"}, "emulation": {"algorithms", "comm", "api"}}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def layer_of(path):
    best = None
    for name, prefix in LAYERS:
        if path.startswith(prefix) and (best is None or len(prefix) > len(best[1])):
            best = (name, prefix)
    return best[0] if best else None


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    bad = []
    checked = 0
    for folder in ("core", "reduce", "device", "topology", "transports", "algorithms", "src", "emulation"):
        for dirpath, _, files in os.walk(os.path.join(root, folder)):
            for f in files:
                if not f.endswith((".h", ".cc", ".cu", ".def")):
                    continue
                path = os.path.relpath(os.path.join(dirpath, f), root)
                mine = layer_of(path)
                checked += 1
                with open(os.path.join(root, path), errors="replace") as src:
                    for number, line in enumerate(src, 1):
                        m = INCLUDE.match(line)
                        if not m or m.group(1).startswith("chorus/"):
                            continue
                        theirs = layer_of(m.group(1))
                        if theirs is None:
                            bad.append(f"{path}:{number}: {mine} includes {m.group(1)}, which is in no layer")
                        elif ORDER.index(theirs) > ORDER.index(mine):
                            bad.append(f"{path}:{number}: {mine} includes {m.group(1)} ({theirs}, a higher layer)")
                        elif theirs in FORBIDDEN.get(mine, ()):
                            bad.append(f"{path}:{number}: {mine} includes {m.group(1)} ({theirs}: not for {mine})")
    for b in bad:
        print(b)
    print(f"check_layers: {checked} files, {len(bad)} upward include(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
