package btf

import (
	"strconv"

	"github.com/cilium/ebpf/btf"
)

// This file is the part of libbpf's C declaration printer that
// btf_dump_var_data() uses for its "(type)" cast: btf_dump_emit_type_cast()
// with strip_mods and skip_anon_defs set, so modifiers are dropped and
// anonymous types are not expanded.

// nameResolver is btf_dump_resolve_name()'s state: the second and later types
// resolved with the same name get a "___N" suffix. libbpf keeps one map for
// struct/union/enum/fwd names and one for typedef names.
type nameResolver struct {
	typeNames, identNames map[string]int
	cached                map[btf.Type]string
}

// typeName is btf_dump_type_name(), for struct, union, enum and fwd names.
func (r *nameResolver) typeName(t btf.Type) string {
	if r.typeNames == nil {
		r.typeNames = make(map[string]int)
	}
	return r.resolve(t, r.typeNames)
}

// identName is btf_dump_ident_name(), for typedef names.
func (r *nameResolver) identName(t btf.Type) string {
	if r.identNames == nil {
		r.identNames = make(map[string]int)
	}
	return r.resolve(t, r.identNames)
}

// resolve is btf_dump_resolve_name().
func (r *nameResolver) resolve(t btf.Type, names map[string]int) string {
	orig := t.TypeName()
	if orig == "" {
		return ""
	}
	if name, ok := r.cached[t]; ok {
		return name
	}
	if r.cached == nil {
		r.cached = make(map[btf.Type]string)
	}
	name := orig
	if e, ok := t.(*btf.Enum); !(ok && kindOf(e) == kindEnum && len(e.Values) == 0) && kindOf(t) != kindFwd {
		names[orig]++
		if n := names[orig]; n > 1 {
			name = orig + "___" + strconv.Itoa(n)
		}
	}
	r.cached[t] = name
	return name
}

// emitTypeCast is btf_dump_emit_type_cast().
func (d *dumper) emitTypeCast(t btf.Type, topLevel bool) {
	// array members get no type name, to avoid (char[4])[(char)'f',...]
	if d.isArrayMember {
		return
	}
	// a variable or section: it is done for the variable's value
	if k := kindOf(t); k == kindVar || k == kindDatasec {
		return
	}
	if topLevel {
		d.printf("(")
	}
	d.emitTypeDecl(t, "")
	if topLevel {
		d.printf(")")
	}
}

// emitTypeDecl is btf_dump_emit_type_decl() with strip_mods: it stacks the
// chain of types down to a terminal one, then prints it in C syntax.
func (d *dumper) emitTypeDecl(t btf.Type, fname string) {
	if !d.enter() {
		return
	}
	defer d.leave()
	var decls []btf.Type
chain:
	for i := 0; i < maxSkipChain; i++ {
		if !isMod(t) {
			decls = append(decls, t)
		}
		switch kindOf(t) {
		case kindUnkn: // VOID
			break chain
		case kindPtr, kindVolatile, kindConst, kindRestrict, kindTypeTag:
			t = next(t)
		case kindFuncProto:
			t = t.(*btf.FuncProto).Return
		case kindArray:
			t = t.(*btf.Array).Type
		default:
			// terminal types, and unexpected ones (libbpf warns)
			break chain
		}
	}
	d.emitTypeChain(&decls, fname)
}

// emitName is btf_dump_emit_name().
func (d *dumper) emitName(name string, lastWasPtr bool) {
	if name != "" && !lastWasPtr {
		d.printf(" ")
	}
	d.printf(name)
}

// emitTypeChain is btf_dump_emit_type_chain(), popping from the end of
// decls. Modifiers were stripped, so the modifier cases are not needed.
func (d *dumper) emitTypeChain(decls *[]btf.Type, fname string) {
	if !d.enter() {
		return
	}
	defer d.leave()
	pop := func() btf.Type {
		t := (*decls)[len(*decls)-1]
		*decls = (*decls)[:len(*decls)-1]
		return t
	}
	lastWasPtr := true
	for len(*decls) > 0 {
		t := pop()
		k := kindOf(t)
		switch k {
		case kindUnkn:
			d.printf("void")
			lastWasPtr = false
			continue
		case kindInt, kindFloat:
			d.printf(t.TypeName())
		case kindStruct, kindUnion:
			// btf_dump_emit_struct_fwd(): anonymous ones are not expanded
			s := "struct"
			if k == kindUnion {
				s = "union"
			}
			if t.TypeName() != "" {
				s += " "
			}
			d.printf(s + d.names.typeName(t))
		case kindEnum, kindEnum64:
			d.printf("enum " + d.names.typeName(t))
		case kindFwd:
			s := "struct "
			if t.(*btf.Fwd).Kind == btf.FwdUnion {
				s = "union "
			}
			d.printf(s + d.names.typeName(t))
		case kindTypedef:
			d.printf(d.names.identName(t))
		case kindPtr:
			if lastWasPtr {
				d.printf("*")
			} else {
				d.printf(" *")
			}
		case kindArray:
			d.emitArrayLink(decls, t.(*btf.Array), fname, lastWasPtr)
			return
		case kindFuncProto:
			d.emitFuncProtoLink(decls, t.(*btf.FuncProto), fname, lastWasPtr)
			return
		default:
			// "unexpected type in decl chain"
			return
		}
		lastWasPtr = k == kindPtr
	}
	d.emitName(fname, lastWasPtr)
}

// emitArrayLink emits an array of the chain and what is left of it inside
// it (btf_dump_emit_type_chain()'s BTF_KIND_ARRAY).
func (d *dumper) emitArrayLink(decls *[]btf.Type, a *btf.Array, fname string, lastWasPtr bool) {
	if len(*decls) == 0 {
		d.emitName(fname, lastWasPtr)
		d.printf("[" + strconv.FormatUint(uint64(a.Nelems), 10) + "]")
		return
	}
	multidim := kindOf((*decls)[len(*decls)-1]) == kindArray
	// we need space if we have named non-pointer
	if fname != "" && !lastWasPtr {
		d.printf(" ")
	}
	// no parentheses for multi-dimensional array
	if !multidim {
		d.printf("(")
	}
	d.emitTypeChain(decls, fname)
	if !multidim {
		d.printf(")")
	}
	d.printf("[" + strconv.FormatUint(uint64(a.Nelems), 10) + "]")
}

// emitFuncProtoLink emits a function prototype of the chain, what is left
// of it in parentheses, and its parameters (btf_dump_emit_type_chain()'s
// BTF_KIND_FUNC_PROTO).
func (d *dumper) emitFuncProtoLink(decls *[]btf.Type, fp *btf.FuncProto, fname string, lastWasPtr bool) {
	if len(*decls) > 0 {
		d.printf(" (")
		d.emitTypeChain(decls, fname)
		d.printf(")")
	} else {
		d.emitName(fname, lastWasPtr)
	}
	d.printf("(")
	// clang emits a single void argument for "no arguments"
	if n := len(fp.Params); n == 0 || (n == 1 && kindOf(fp.Params[0].Type) == kindUnkn) {
		d.printf("void)")
		return
	}
	for i, p := range fp.Params {
		if i > 0 {
			d.printf(", ")
		}
		// last arg of type void is vararg
		if i == len(fp.Params)-1 && kindOf(p.Type) == kindUnkn {
			d.printf("...")
			break
		}
		d.emitTypeDecl(p.Type, p.Name)
	}
	d.printf(")")
}
