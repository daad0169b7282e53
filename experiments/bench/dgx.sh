#!/usr/bin/env bash
# Write a SimGrid platform of N/8 DGX H100-like nodes (gpu-0..gpu-(N-1)) to stdout:
# NVSwitch crossbar inside a node (450 GB/s per GPU per direction, 0.5 us), the 8 NDR
# rails of a node lumped into one 400 GB/s split-duplex link (2 us) to a non-blocking
# core (a Full zone: N/8 squared routes, fine to a few hundred nodes). Same figures as
# configs/platforms/dgx-2node.xml (sources in ../shared/data/hardware.md).
set -euo pipefail
n=${1:?usage: dgx.sh N}
nodes=$((n / 8))
cat <<XML
<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<!-- $nodes DGX H100-like nodes, $n GPUs -->
<platform version="4.1">
  <zone id="world" routing="Full">
XML
for ((i = 0; i < nodes; i++)); do
  printf '    <cluster id="node%d" prefix="gpu-" suffix="" radical="%d-%d" speed="989Tf" bw="450GBps" lat="0.5us" sharing_policy="SPLITDUPLEX" router_id="node%d-nic"/>\n' $i $((8 * i)) $((8 * i + 7)) $i
  printf '    <link id="rails%d" bandwidth="400GBps" latency="1us" sharing_policy="SPLITDUPLEX"/>\n' $i
done
for ((i = 0; i < nodes; i++)); do
  for ((j = 0; j < nodes; j++)); do
    [ $i -eq $j ] && continue
    printf '    <zoneRoute src="node%d" dst="node%d" gw_src="node%d-nic" gw_dst="node%d-nic" symmetrical="NO"><link_ctn id="rails%d" direction="UP"/><link_ctn id="rails%d" direction="DOWN"/></zoneRoute>\n' $i $j $i $j $i $j
  done
done
printf '  </zone>\n</platform>\n'
