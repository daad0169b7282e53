#!/usr/bin/env bash
# Write a SimGrid FAT_TREE cluster of N GPU hosts gpu-0..gpu-(N-1) (one NIC per GPU,
# H100 NDR 400 Gb/s = 50 GB/s, 2 us per link, non-blocking 2 or 3 levels of 32-port
# switches) to stdout. Stand-in until the cluster builder lands: a GPU is a leaf host,
# so traffic inside a node also crosses the leaf switch.
set -euo pipefail
n=${1:?usage: fattree.sh N}
case $n in
  16|32) topo="1;$n;1;1" ;;
  64|128|256|512|1024) topo="2;32,$((n / 32));1,32;1,1" ;;
  2048|4096|8192|16384|32768) topo="3;32,32,$((n / 1024));1,32,32;1,1,1" ;;
  *) echo "fattree.sh: unsupported size $n" >&2; exit 2 ;;
esac
cat <<XML
<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<!-- $n GPUs on a non-blocking fat-tree (topo_parameters $topo), 50 GB/s, 2 us per link -->
<platform version="4.1">
  <zone id="world" routing="Full">
    <cluster id="ft" prefix="gpu-" suffix="" radical="0-$((n - 1))" speed="989Tf" bw="50GBps" lat="2us"
             topology="FAT_TREE" topo_parameters="$topo" sharing_policy="SPLITDUPLEX"/>
  </zone>
</platform>
XML
