// Package btf formats values of BTF types exactly as libbpf's
// btf_dump__dump_type_data() does with the options perf uses for
// bpf_metadata_* variables: compact, skip_names and emit_strings.
//
// It is a port of the typed-data half of libbpf's src/btf_dump.c (libbpf
// 1.6/1.7, as built into perf 7.2), checked against what perf 7.2 writes into
// PERF_RECORD_BPF_METADATA. The rules are libbpf's, quirks included: zero
// members are skipped, except in arrays; a struct counts as zero when its
// first member is zero; a string member is followed by no comma; once a char
// array has been printed as an array, zeroes are skipped in every later array
// of the same value. Where perf's output differs from a plain reading of the
// source (see getBitfieldValue), perf wins.
//
// It is not a general BTF pretty-printer (cilium/ebpf's btf.GoFormatter and
// bpftool's btf_dumper print other formats), and it knows nothing about perf
// records: callers pick the variables and cut the keys.
//
// Two assumptions stand in for facts a btf.Type does not carry: pointers are
// 8 bytes (libbpf's guess from "long" for BPF programs), and data starts at an
// address aligned for any type (perf's calloc()ed map value; FormatVar adds
// the variable's offset). Alignment matters for pointers ("%p" or "0x%llx")
// and enums (see getBitfieldValue).
//
// # Origin and licence
//
// The rules, and the names of the functions that apply them, are those of
// libbpf's src/btf_dump.c (https://github.com/libbpf/libbpf):
//
//	Copyright (c) 2019 Facebook
//	SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
//
// This port is taken under BSD-2-Clause, the licence of bpfmeta.
package btf
