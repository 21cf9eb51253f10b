package btf

import (
	"encoding/binary"
	"math"
	"math/big"
	"strconv"
)

// This file reproduces the few glibc printf conversions libbpf uses for
// values whose Go formatting differs: %f/%lf/%Lf and %p. perf formats with
// glibc's vsnprintf in the C locale (isprint is true for 0x20..0x7e only).

// isprint is isprint(3) in the C locale, applied as libbpf applies it to a
// (signed) char: bytes >= 0x80 are negative and never printable.
func isprint(c byte) bool { return c >= 0x20 && c <= 0x7e }

// cDouble formats f as glibc's "%f" does: 6 decimals, rounded exactly with
// ties to even (Go's 'f' formatting is exact too), "inf"/"nan" with a sign
// for negative values.
func cDouble(f float64) string {
	switch {
	case math.IsNaN(f):
		if math.Signbit(f) {
			return "-nan"
		}
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	return strconv.FormatFloat(f, 'f', 6, 64)
}

// cLongDouble formats the x86-64 long double in b (the 80-bit x87 format in
// the first 10 of its 16 bytes) as glibc's "%Lf" does. glibc tests for NaN
// with the FPU, which treats the invalid encodings (pseudo-NaN,
// pseudo-infinity, unnormals: integer bit clear with a non-zero exponent) as
// NaN.
func cLongDouble(b [16]byte) string {
	mant := readUint(binary.LittleEndian, b[:8])
	se := uint16(b[8]) | uint16(b[9])<<8
	neg := se&0x8000 != 0
	exp := int(se & 0x7fff)
	intBit := mant&(1<<63) != 0
	sign := ""
	if neg {
		sign = "-"
	}
	switch {
	case exp == 0x7fff && intBit && mant<<1 == 0:
		return sign + "inf"
	case exp == 0x7fff, exp != 0 && !intBit:
		return sign + "nan"
	}
	if exp == 0 {
		exp = 1 // denormals and pseudo-denormals
	}
	x := new(big.Float).SetPrec(64).SetUint64(mant)
	x.SetMantExp(x, exp-16383-63)
	return sign + x.Text('f', 6)
}

// cPointer formats p as glibc's "%p" does.
func cPointer(p uint64) string {
	if p == 0 {
		return "(nil)"
	}
	return "0x" + strconv.FormatUint(p, 16)
}
