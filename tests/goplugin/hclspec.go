package main

// A plugin config block and a task's config block as Nomad's client turns
// them into the msgpack it sends: the driver's schema (its hclspec, from
// ConfigSchema / TaskConfigSchema) is converted to an hcldec spec
// (helper/pluginutils/hclspecutils/dec.go Convert: an Object's keys name
// its attributes, an Attr's or a block's own name wins, a type is an HCL
// type expression, a Literal an HCL expression, a Default tries its
// primary first), the block (a map, as the agent config or the job parser
// gives it) is encoded as JSON, parsed with HCL's JSON syntax and decoded
// with that spec (helper/pluginutils/hclutils/util.go ParseHclInterface),
// and the value is marshalled as go-cty msgpack of its own type
// (helper/pluginutils/loader/init.go validatePluginConfig for the plugin
// block, plugins/drivers/driver.go TaskConfig.EncodeDriverConfig for a
// task's). A schema Nomad cannot convert, or a block it would refuse, is
// caught here as it would be there.

import (
	"encoding/json"
	"fmt"

	hcl "github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/typeexpr"
	"github.com/hashicorp/hcl/v2/hcldec"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	hjson "github.com/hashicorp/hcl/v2/json"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/msgpack"

	"taskscope/nomadpb/hclspec"
)

func convertSpec(s *hclspec.Spec, implied string) (hcldec.Spec, error) {
	if s == nil {
		return nil, fmt.Errorf("nil spec")
	}
	switch b := s.Block.(type) {
	case *hclspec.Spec_Object:
		out := hcldec.ObjectSpec{}
		for name, sub := range b.Object.GetAttributes() {
			c, err := convertSpec(sub, name)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", name, err)
			}
			out[name] = c
		}
		return out, nil
	case *hclspec.Spec_Array:
		out := hcldec.TupleSpec{}
		for _, sub := range b.Array.GetValues() {
			c, err := convertSpec(sub, "")
			if err != nil {
				return nil, err
			}
			out = append(out, c)
		}
		return out, nil
	case *hclspec.Spec_Attr:
		name := implied
		if n := b.Attr.GetName(); n != "" {
			name = n
		}
		if name == "" {
			return nil, fmt.Errorf("attr without a name")
		}
		t, err := typeExpr(b.Attr.GetType())
		if err != nil {
			return nil, err
		}
		return &hcldec.AttrSpec{Name: name, Type: t, Required: b.Attr.GetRequired()}, nil
	case *hclspec.Spec_BlockValue:
		nested, err := convertSpec(b.BlockValue.GetNested(), "")
		if err != nil {
			return nil, err
		}
		return &hcldec.BlockSpec{TypeName: nameOr(b.BlockValue.GetName(), implied), Required: b.BlockValue.GetRequired(),
			Nested: nested}, nil
	case *hclspec.Spec_BlockAttrs:
		t, err := typeExpr(b.BlockAttrs.GetType())
		if err != nil {
			return nil, err
		}
		return &hcldec.BlockAttrsSpec{TypeName: nameOr(b.BlockAttrs.GetName(), implied), ElementType: t,
			Required: b.BlockAttrs.GetRequired()}, nil
	case *hclspec.Spec_BlockList:
		nested, err := convertSpec(b.BlockList.GetNested(), "")
		if err != nil {
			return nil, err
		}
		return &hcldec.BlockListSpec{TypeName: nameOr(b.BlockList.GetName(), implied), Nested: nested,
			MinItems: int(b.BlockList.GetMinItems()), MaxItems: int(b.BlockList.GetMaxItems())}, nil
	case *hclspec.Spec_BlockSet:
		nested, err := convertSpec(b.BlockSet.GetNested(), "")
		if err != nil {
			return nil, err
		}
		return &hcldec.BlockSetSpec{TypeName: nameOr(b.BlockSet.GetName(), implied), Nested: nested,
			MinItems: int(b.BlockSet.GetMinItems()), MaxItems: int(b.BlockSet.GetMaxItems())}, nil
	case *hclspec.Spec_BlockMap:
		nested, err := convertSpec(b.BlockMap.GetNested(), "")
		if err != nil {
			return nil, err
		}
		if len(b.BlockMap.GetLabels()) == 0 {
			return nil, fmt.Errorf("block_map without labels")
		}
		return &hcldec.BlockMapSpec{TypeName: nameOr(b.BlockMap.GetName(), implied),
			LabelNames: b.BlockMap.GetLabels(), Nested: nested}, nil
	case *hclspec.Spec_Default:
		// dec.go decodeDefaultSpec: both parts without an implied name.
		primary, err := convertSpec(b.Default.GetPrimary(), "")
		if err != nil {
			return nil, fmt.Errorf("default's primary: %v", err)
		}
		def, err := convertSpec(b.Default.GetDefault(), "")
		if err != nil {
			return nil, fmt.Errorf("default's default: %v", err)
		}
		return &hcldec.DefaultSpec{Primary: primary, Default: def}, nil
	case *hclspec.Spec_Literal:
		expr, diags := hclsyntax.ParseExpression([]byte(b.Literal.GetValue()), "proto", hcl.Pos{})
		if diags.HasErrors() {
			return nil, fmt.Errorf("literal %q: %v", b.Literal.GetValue(), diags)
		}
		v, diags := expr.Value(nil)
		if diags.HasErrors() {
			return nil, fmt.Errorf("literal %q: %v", b.Literal.GetValue(), diags)
		}
		return &hcldec.LiteralSpec{Value: v}, nil
	}
	return nil, fmt.Errorf("unknown spec block %T", s.Block)
}

func nameOr(name, implied string) string {
	if name != "" {
		return name
	}
	return implied
}

func typeExpr(text string) (cty.Type, error) {
	expr, diags := hclsyntax.ParseExpression([]byte(text), "proto", hcl.Pos{})
	if diags.HasErrors() {
		return cty.NilType, fmt.Errorf("type %q: %v", text, diags)
	}
	t, diags := typeexpr.TypeConstraint(expr)
	if diags.HasErrors() {
		return cty.NilType, fmt.Errorf("type %q: %v", text, diags)
	}
	return t, nil
}

// encodeBlock: a config block (as a map) decoded with the schema and
// marshalled as Nomad marshals it.
func encodeBlock(schema *hclspec.Spec, block map[string]interface{}) ([]byte, cty.Value, error) {
	spec, err := convertSpec(schema, "")
	if err != nil {
		return nil, cty.NilVal, fmt.Errorf("the schema does not convert: %v", err)
	}
	text, err := json.Marshal(block)
	if err != nil {
		return nil, cty.NilVal, err
	}
	file, diags := hjson.Parse(text, "config.json")
	if diags.HasErrors() {
		return nil, cty.NilVal, fmt.Errorf("%v", diags)
	}
	val, diags := hcldec.Decode(file.Body, spec, &hcl.EvalContext{})
	if diags.HasErrors() {
		return nil, cty.NilVal, fmt.Errorf("%v", diags)
	}
	data, err := msgpack.Marshal(val, val.Type())
	if err != nil {
		return nil, cty.NilVal, err
	}
	return data, val, nil
}

// rawMsgpack: a value of a given type as msgpack, for configs Nomad's
// decoding would not let through (the driver must refuse them too).
func rawMsgpack(val cty.Value) []byte {
	data, err := msgpack.Marshal(val, val.Type())
	if err != nil {
		panic(err)
	}
	return data
}
