#!/usr/bin/env bash
# The plugin ABI's surface as the linker sees it: the global Swift symbols of
# the RoleKit module (RolePlugin, RoleContext, PluginDescriptor, PluginABI and
# what they define) that libBLECore.so exports, sorted. A plugin compiled
# against the core binds to these; Tests/AgentCoreTests/PluginABITests.swift
# compares them with Tests/AgentCoreTests/Fixtures/plugin-abi/v<N>.symbols for
# the current PluginABI.version (docs/plugins.md, "ABI version").
# Usage: scripts/plugin-abi-symbols.sh [BUILD_DIR]   (default .build/debug)
set -euo pipefail
dir=${1:-.build/debug}
nm --defined-only --extern-only "$dir/libBLECore.so" | awk '{print $NF}' | grep '^\$s7RoleKit' | LC_ALL=C sort -u
