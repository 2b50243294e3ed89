#!/usr/bin/env python3
"""How a server's responses left it: per connection, its data packets grouped into bursts.

Reads a pcap written by `twinbench run --pcap` (the simulation's PPP captures or the emulated
path's raw-IP ones, micro- or nanosecond timestamps; only the headers are needed) and prints,
for each connection that carried at least --min-bytes from --port, every burst: packets sent
with no gap longer than --gap ms between them. A response sent in one paced flight is one burst
spread over its pacing time; one held by the congestion window is a burst per round trip.

Usage: python3 scripts/pcap-flights.py FILE.pcap [--port 8927] [--gap 30] [--min-bytes 1000000]
"""
import argparse
import collections
import struct
import sys

LINKTYPE_PPP = 9
LINKTYPE_RAW = 101
NANOSECOND_MAGIC = 0xA1B23C4D


def packets(path):
    """(time s, source port, destination port, payload bytes) of each IPv4 TCP packet."""
    data = open(path, "rb").read()
    if len(data) < 24:
        sys.exit(f"{path}: not a pcap file (shorter than its header)")
    magic, _, _, _, _, _, linktype = struct.unpack("<IHHiIII", data[:24])
    if magic not in (0xA1B2C3D4, NANOSECOND_MAGIC):
        sys.exit(f"{path}: not a little-endian pcap file (magic {magic:#x})")
    if linktype not in (LINKTYPE_PPP, LINKTYPE_RAW):
        sys.exit(f"{path}: link type {linktype}: expected PPP (9) or raw IP (101)")
    divisor = 1e9 if magic == NANOSECOND_MAGIC else 1e6
    link_header = 2 if linktype == LINKTYPE_PPP else 0
    offset = 24
    while offset + 16 <= len(data):
        seconds, fraction, captured, _ = struct.unpack("<IIII", data[offset:offset + 16])
        ip = data[offset + 16 + link_header:offset + 16 + captured]
        offset += 16 + captured
        if len(ip) < 20 or ip[0] >> 4 != 4 or ip[9] != 6:
            continue
        ihl = (ip[0] & 15) * 4
        total = struct.unpack(">H", ip[2:4])[0]
        if len(ip) < ihl + 13:
            continue
        source, destination = struct.unpack(">HH", ip[ihl:ihl + 4])
        tcp_header = (ip[ihl + 12] >> 4) * 4
        yield seconds + fraction / divisor, source, destination, total - ihl - tcp_header


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pcap")
    parser.add_argument("--port", type=int, default=8927, help="the server's port")
    parser.add_argument("--gap", type=float, default=30.0, help="ms of silence that ends a burst")
    parser.add_argument("--min-bytes", type=int, default=1_000_000)
    args = parser.parse_args()

    start = None
    sent = collections.defaultdict(list)  # client port -> [(time, payload)]
    for time, source, destination, payload in packets(args.pcap):
        start = time if start is None else start
        if source == args.port and payload > 0:
            sent[destination].append((time - start, payload))
    for client_port, data in sent.items():
        total = sum(size for _, size in data)
        if total < args.min_bytes:
            continue
        print(f"connection from client port {client_port}: {total} bytes")
        burst = [data[0]]
        for previous, packet in zip(data, data[1:]):
            if (packet[0] - previous[0]) * 1000 > args.gap:
                report(burst)
                burst = []
            burst.append(packet)
        report(burst)


def report(burst):
    span_ms = (burst[-1][0] - burst[0][0]) * 1000
    size = sum(s for _, s in burst)
    print(f"  at {burst[0][0]:8.3f} s: {len(burst):5d} packets, {size:9d} bytes over {span_ms:7.1f} ms")


if __name__ == "__main__":
    main()
