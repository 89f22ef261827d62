package main

// The README's Nomad client config and job, read from the README itself,
// so that what an operator copies is what this test loads and runs: the
// ```hcl blocks are parsed with HCL's native syntax, the plugin block's
// label and config and the taskscope task's config block taken out.

import (
	"fmt"
	"math/big"
	"os"
	"strings"

	hcl "github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

type readmeConfig struct {
	pluginDir    string
	pluginLabel  string
	pluginConfig map[string]interface{}
	taskName     string
	taskConfig   map[string]interface{}
	// Every taskscope task's config block in the README (the examples of
	// jobs moved from exec and raw_exec too), by task name.
	examples map[string]map[string]interface{}
}

func hclBlocks(markdown string) []string {
	var out []string
	lines := strings.Split(markdown, "\n")
	for i := 0; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) != "```hcl" {
			continue
		}
		var b []string
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
			b = append(b, lines[i])
		}
		out = append(out, strings.Join(b, "\n"))
	}
	return out
}

func ctyToGo(v cty.Value) (interface{}, error) {
	switch {
	case v.IsNull():
		return nil, nil
	case v.Type() == cty.String:
		return v.AsString(), nil
	case v.Type() == cty.Bool:
		return v.True(), nil
	case v.Type() == cty.Number:
		f, _ := v.AsBigFloat().Float64()
		if v.AsBigFloat().IsInt() {
			i, _ := v.AsBigFloat().Int(new(big.Int))
			return i.Int64(), nil
		}
		return f, nil
	case v.Type().IsTupleType() || v.Type().IsListType():
		var out []interface{}
		for it := v.ElementIterator(); it.Next(); {
			_, e := it.Element()
			g, err := ctyToGo(e)
			if err != nil {
				return nil, err
			}
			out = append(out, g)
		}
		return out, nil
	case v.Type().IsObjectType() || v.Type().IsMapType():
		// HCL's { key = value } (a map attribute, such as ulimit).
		out := map[string]interface{}{}
		for it := v.ElementIterator(); it.Next(); {
			k, e := it.Element()
			g, err := ctyToGo(e)
			if err != nil {
				return nil, err
			}
			out[k.AsString()] = g
		}
		return out, nil
	}
	return nil, fmt.Errorf("unexpected value of type %s", v.Type().FriendlyName())
}

func attrsOf(body *hclsyntax.Body) (map[string]interface{}, error) {
	out := map[string]interface{}{}
	for name, a := range body.Attributes {
		v, diags := a.Expr.Value(&hcl.EvalContext{})
		if diags.HasErrors() {
			return nil, fmt.Errorf("%s: %v", name, diags)
		}
		g, err := ctyToGo(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", name, err)
		}
		out[name] = g
	}
	return out, nil
}

func blocksOf(body *hclsyntax.Body, typ string) []*hclsyntax.Block {
	var out []*hclsyntax.Block
	for _, b := range body.Blocks {
		if b.Type == typ {
			out = append(out, b)
		}
	}
	return out
}

func readReadme(path string) (*readmeConfig, error) {
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	rc := &readmeConfig{}
	for i, src := range hclBlocks(string(text)) {
		file, diags := hclsyntax.ParseConfig([]byte(src), fmt.Sprintf("README block %d", i+1), hcl.Pos{Line: 1, Column: 1})
		if diags.HasErrors() {
			return nil, fmt.Errorf("README block %d: %v", i+1, diags)
		}
		body := file.Body.(*hclsyntax.Body)
		if a, found := body.Attributes["plugin_dir"]; found {
			v, _ := a.Expr.Value(nil)
			rc.pluginDir = v.AsString()
		}
		for _, p := range blocksOf(body, "plugin") {
			if len(p.Labels) != 1 {
				return nil, fmt.Errorf("a plugin block needs one label")
			}
			rc.pluginLabel = p.Labels[0]
			for _, c := range blocksOf(p.Body, "config") {
				if rc.pluginConfig, err = attrsOf(c.Body); err != nil {
					return nil, err
				}
			}
		}
		for _, job := range blocksOf(body, "job") {
			for _, group := range blocksOf(job.Body, "group") {
				for _, task := range blocksOf(group.Body, "task") {
					d, found := task.Body.Attributes["driver"]
					if !found {
						continue
					}
					if v, _ := d.Expr.Value(nil); v.Type() != cty.String || v.AsString() != "taskscope" {
						continue
					}
					var cfg map[string]interface{}
					for _, c := range blocksOf(task.Body, "config") {
						if cfg, err = attrsOf(c.Body); err != nil {
							return nil, err
						}
					}
					if rc.examples == nil {
						rc.examples = map[string]map[string]interface{}{}
					}
					rc.examples[task.Labels[0]] = cfg
					if rc.taskName == "" { // the first job is the one run (later ones are examples)
						rc.taskName = task.Labels[0]
						rc.taskConfig = cfg
					}
				}
			}
		}
	}
	if rc.pluginLabel == "" || rc.pluginConfig == nil || rc.taskConfig == nil || rc.pluginDir == "" {
		return nil, fmt.Errorf("no plugin_dir, plugin block with a config, or taskscope task with a config in %s", path)
	}
	return rc, nil
}
