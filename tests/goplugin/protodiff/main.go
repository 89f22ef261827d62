// Command protodiff compares two protobuf descriptor sets by what is on
// the wire: every message, field (number, cardinality, type, packing),
// enum value, reserved range and name, and RPC, by full name. It prints
// what only one side has or what differs, and exits 1 when anything does.
// scripts/nomad-proto-check.sh runs it on the driver's .proto files
// against Nomad's and go-plugin's current ones.
package main

import (
	"fmt"
	"os"
	"sort"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
)

func load(p string) map[string]string {
	b, err := os.ReadFile(p)
	if err != nil {
		panic(err)
	}
	var set descriptorpb.FileDescriptorSet
	if err := proto.Unmarshal(b, &set); err != nil {
		panic(err)
	}
	files, err := protodesc.NewFiles(&set)
	if err != nil {
		panic(err)
	}
	out := map[string]string{}
	files.RangeFiles(func(f protoreflect.FileDescriptor) bool {
		if f.Package() == "google.protobuf" {
			return true
		}
		var msgs func(ms protoreflect.MessageDescriptors)
		enums := func(es protoreflect.EnumDescriptors) {
			for i := 0; i < es.Len(); i++ {
				e := es.Get(i)
				for j := 0; j < e.Values().Len(); j++ {
					v := e.Values().Get(j)
					out["enum "+string(v.FullName())] = fmt.Sprint(v.Number())
				}
			}
		}
		msgs = func(ms protoreflect.MessageDescriptors) {
			for i := 0; i < ms.Len(); i++ {
				m := ms.Get(i)
				out["msg "+string(m.FullName())] = ""
				for j := 0; j < m.Fields().Len(); j++ {
					fd := m.Fields().Get(j)
					t := fd.Kind().String()
					if fd.Message() != nil {
						t = string(fd.Message().FullName())
					}
					if fd.Enum() != nil {
						t = string(fd.Enum().FullName())
					}
					out[fmt.Sprintf("field %s.%s", m.FullName(), fd.Name())] = fmt.Sprintf("%d %s %s packed=%v", fd.Number(), fd.Cardinality(), t, fd.IsPacked())
				}
				rr := m.ReservedRanges()
				for j := 0; j < rr.Len(); j++ {
					out[fmt.Sprintf("reserved %s %v", m.FullName(), rr.Get(j))] = ""
				}
				rn := m.ReservedNames()
				for j := 0; j < rn.Len(); j++ {
					out[fmt.Sprintf("reservedname %s %s", m.FullName(), rn.Get(j))] = ""
				}
				enums(m.Enums())
				msgs(m.Messages())
			}
		}
		msgs(f.Messages())
		enums(f.Enums())
		for i := 0; i < f.Services().Len(); i++ {
			s := f.Services().Get(i)
			for j := 0; j < s.Methods().Len(); j++ {
				md := s.Methods().Get(j)
				out["rpc "+string(md.FullName())] = fmt.Sprintf("%s(%v) -> %s(%v)", md.Input().FullName(), md.IsStreamingClient(), md.Output().FullName(), md.IsStreamingServer())
			}
		}
		return true
	})
	return out
}

func main() {
	a, b := load(os.Args[1]), load(os.Args[2])
	var keys []string
	seen := map[string]bool{}
	for k := range a {
		keys = append(keys, k)
		seen[k] = true
	}
	for k := range b {
		if !seen[k] {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	same := 0
	for _, k := range keys {
		va, oka := a[k]
		vb, okb := b[k]
		switch {
		case oka && okb && va == vb:
			same++
		case !okb:
			fmt.Printf("only upstream: %s %s\n", k, va)
		case !oka:
			fmt.Printf("only ours:     %s %s\n", k, vb)
		default:
			fmt.Printf("differs:       %s upstream=%s ours=%s\n", k, va, vb)
		}
	}
	fmt.Printf("%d identical entries\n", same)
	if same != len(keys) {
		os.Exit(1)
	}
}
