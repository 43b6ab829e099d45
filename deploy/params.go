package deploy

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/cloud-assembly/assemble/assembly"
	"github.com/cloud-assembly/assemble/internal/suggest"
)

// Unsigned input is limited to what the signer left open. A deployer's
// parameter value (Options.Parameters, "Droplet.Name") is accepted only
// for a parameter the droplet's template declares, and only when
//   - the manifest lists it as `missing` (provider stack-parameter, props
//     droplet and parameter): the signer left it to the deployer; or
//   - Options.Settable names it (the policy file's deployer-parameters):
//     whoever keeps the policy lets deployers set it, over the signed
//     value or the template's Default.
//
// Anything else is refused before any change: a name the template does
// not declare (with the nearest declared name), a parameter the signed
// droplet sets, one it leaves at the template's Default.

// missingParams are the `missing` stack parameters: "Droplet.Name".
func missingParams(m *assembly.Manifest) map[string]bool {
	out := map[string]bool{}
	for _, ms := range m.Missing {
		id, _ := ms.Props["droplet"].(string)
		param, _ := ms.Props["parameter"].(string)
		if ms.Provider == "stack-parameter" && id != "" && param != "" {
			out[id+"."+param] = true
		}
	}
	return out
}

// declaredParams reads the parameters a stack droplet's template declares
// (nil, false when the template cannot be read).
func declaredParams(src *Source, spec *assembly.Droplet) (map[string]templateParam, bool) {
	tpl := str(spec.Properties, "template")
	if size, ok := src.sizes[tpl]; !ok || size > MaxTemplateSize {
		return nil, false
	}
	body, err := src.ReadFile(tpl)
	if err != nil {
		return nil, false
	}
	info, err := parseTemplate(body)
	if err != nil {
		return nil, false
	}
	return info.params, true
}

// checkParameters checks the deployer's parameters and that every
// `missing` entry of a targeted droplet is supplied.
func checkParameters(src *Source, targeted map[string]bool, params map[string]string, settable []string) []error {
	m := src.manifest
	open := missingParams(m)
	var errs []error
	for _, key := range slices.Sorted(maps.Keys(params)) {
		id, name, ok := strings.Cut(key, ".")
		spec := m.Droplets[id]
		switch {
		case !ok || name == "":
			errs = append(errs, fmt.Errorf("%w: %q: want DROPLET.NAME=VALUE", ErrParameter, key))
			continue
		case spec == nil:
			errs = append(errs, fmt.Errorf("%w: %s: the assembly has no droplet %s%s", ErrParameter, key, id, suggest.Hint(id, m.IDs())))
			continue
		case !isStackType(spec.Type):
			errs = append(errs, fmt.Errorf("%w: %s: droplet %s is not a stack", ErrParameter, key, id))
			continue
		}
		declared, read := declaredParams(src, spec)
		if read {
			if _, ok := declared[name]; !ok {
				names := slices.Sorted(maps.Keys(declared))
				near := ""
				if n := suggest.Nearest(name, names); n != "" {
					near = fmt.Sprintf(" (the nearest it declares is %s)", n)
				}
				if len(names) == 0 {
					near = " (it declares none)"
				}
				errs = append(errs, fmt.Errorf("%w: %s: the template %s of %s declares no parameter %s%s", ErrParameter, key, str(spec.Properties, "template"), id, name, near))
				continue
			}
		}
		if open[key] || slices.Contains(settable, key) {
			continue
		}
		what := "leaves it at the template's Default"
		if p, _ := spec.Properties["parameters"].(map[string]any); p != nil {
			if _, set := p[name]; set {
				what = "sets it itself"
			}
		}
		errs = append(errs, fmt.Errorf("%w: %s: the signed assembly %s and does not leave it open (no `missing` entry names it); a deployer may set it only where the policy file's deployer-parameters names %s", ErrParameter, key, what, key))
	}
	for _, key := range slices.Sorted(maps.Keys(m.Missing)) {
		ms := m.Missing[key]
		id, _ := ms.Props["droplet"].(string)
		param, _ := ms.Props["parameter"].(string)
		if ms.Provider == "stack-parameter" && id != "" && param != "" {
			if !targeted[id] {
				continue
			}
			if _, ok := params[id+"."+param]; !ok {
				errs = append(errs, dropletErr(id, ErrMissing, "stack parameter %s has no value: supply it with Options.Parameters %s.%s=VALUE", param, id, param))
			}
			continue
		}
		errs = append(errs, fmt.Errorf("%w: %s (provider %s): the assembly was made without this information; make it again with it (for a CDK app: cdk synth with the context in cdk.context.json)", ErrMissing, key, ms.Provider))
	}
	return errs
}

// openParams are the parameters of the droplet id a deployer may set
// (missing, or named by settable) but did not this time, sorted: deploy
// keeps their value on an update, and neither deploy nor Status compares
// them (nothing signed says what they should be).
func openParams(src *Source, id string, opts Options) []string {
	var out []string
	add := func(key string) {
		if did, name, _ := strings.Cut(key, "."); did == id {
			if _, given := opts.Parameters[key]; !given && !slices.Contains(out, name) {
				out = append(out, name)
			}
		}
	}
	for key := range missingParams(src.manifest) {
		add(key)
	}
	for _, key := range opts.Settable {
		add(key)
	}
	slices.Sort(out)
	return out
}
