// Package btf prints values of BTF types as libbpf's typed-data printer does, and as JSON.
//
// It prints values of BTF types as libbpf's btf_dump__dump_type_data()
// prints them: the typed-data printer behind bpftool's map dumps and perf's
// BPF metadata, for any type cilium/ebpf loads (a DATASEC, a struct, a map's
// value type):
//
//	d := btf.Dumper{Compact: true}
//	s, err := d.Dump(mapSpec.Value, value)
//	// (struct conf){.rate = (int)100,.name = (char[8])['e','t','h','0',],}
//
// A Dumper's fields are btf_dump_type_data_opts' (Indent, Compact,
// SkipNames, EmitZeroes, EmitStrings), plus what the data's machine is
// (byte order, pointer size) and how much output to keep. JSON prints the
// same values as JSON instead, for programs rather than people.
//
// It is a port of the typed-data half of libbpf's src/btf_dump.c as of
// libbpf 1.7 (the libbpf perf 7.2 is built with), quirks included, and is
// checked against libbpf 1.7 and 1.1 themselves for every option (make
// test builds both as oracles) and against what perf writes. The quirks
// are libbpf's: zero members are skipped, except in arrays; a struct counts
// as zero when its first member is zero; a string is followed by no comma;
// once a char array has been printed as chars, zeroes are skipped in every
// later array of the same value; the number of a signed enum (clang >= 15)
// that matches no enumerator is followed by no comma. Where perf's output
// differs from a plain reading of the source (see getBitfieldValue), perf
// wins.
//
// Two facts a btf.Type does not carry come from elsewhere. Whether an
// 8-byte enum was BTF_KIND_ENUM (clang before 15) or ENUM64 changes how it
// prints: ReadEnumKinds reads it from the raw BTF. And data is taken to
// start at an address aligned for any type (a map value is): alignment
// decides between "%p" and "0x%llx" for pointers and how enums are read.
//
// It is not a C declaration printer (cilium/ebpf's btf.GoFormatter and
// bpftool's "btf dump format c" are), and it knows nothing of perf.
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
