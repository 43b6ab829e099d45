package review

import (
	"sort"
	"strings"
)

// Broadening returns the grants of next that no grant of prev covers
// (see the package documentation): what the change would allow that the
// deployed template does not. prev is nil for a stack not deployed yet,
// when every grant of next is new. An error wraps ErrTooManyGrants.
func Broadening(prev, next Template) ([]*Grant, error) {
	ng, err := Grants(next)
	if err != nil {
		return nil, err
	}
	var og []*Grant
	if prev != nil {
		if og, err = Grants(prev); err != nil {
			return nil, err
		}
	}
	exact := map[string]bool{}
	byScope := map[string][]*Grant{}
	for _, g := range og {
		exact[g.key()] = true
		byScope[g.Scope] = append(byScope[g.Scope], g)
	}
	var out []*Grant
	seen := map[string]bool{}
	for _, g := range ng {
		k := g.key()
		if exact[k] || seen[k] {
			continue
		}
		covered := false
		for _, o := range byScope[g.Scope] {
			if Covers(o, g) {
				covered = true
				break
			}
		}
		if !covered {
			seen[k] = true
			out = append(out, g)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Resource != b.Resource {
			return a.Resource < b.Resource
		}
		return a.Path < b.Path
	})
	return out, nil
}

// Covers reports whether grant o allows everything grant g allows: the
// same scope and kind of grant, and for policies a principal, action and
// target at least as wide and conditions that are a subset of g's; for
// security group rules a peer that contains g's and a protocol and port
// range that contain g's.
func Covers(o, g *Grant) bool {
	if o.Scope != g.Scope || o.Kind != g.Kind {
		return false
	}
	if o.Kind == KindIngress || o.Kind == KindEgress {
		return peerCovers(o, g) && portsCover(o, g)
	}
	return patternCovers(o.Principal, g.Principal, false) &&
		patternCovers(o.Action, g.Action, true) &&
		patternCovers(o.Target, g.Target, false) &&
		conditionCovers(o.cond, g.cond)
}

func peerCovers(o, g *Grant) bool {
	if o.peer.IsValid() && g.peer.IsValid() {
		return o.peer.Addr().Is4() == g.peer.Addr().Is4() && o.peer.Bits() <= g.peer.Bits() && o.peer.Contains(g.peer.Addr())
	}
	return o.Principal == g.Principal
}

func portsCover(o, g *Grant) bool {
	if o.proto == "all" {
		return true
	}
	return o.proto == g.proto && o.from <= g.from && g.to <= o.to
}

// conditionCovers: o's conditions are all among g's (fewer conditions
// allow more).
func conditionCovers(o, g map[string]map[string][]string) bool {
	for op, keys := range o {
		gk, ok := g[op]
		if !ok {
			return false
		}
		for k, vals := range keys {
			gv, ok := gk[k]
			if !ok || strings.Join(gv, "\x00") != strings.Join(vals, "\x00") {
				return false
			}
		}
	}
	return true
}

// patternCovers reports whether every string the IAM pattern g matches
// (* any run, ? any one character) the pattern o matches too. A * in g can
// only be matched by a * in o. "*" covers everything. fold compares
// letters case-insensitively (actions).
func patternCovers(o, g string, fold bool) bool {
	if o == "*" || o == g {
		return true
	}
	if strings.HasPrefix(o, "Not:") || strings.HasPrefix(g, "Not:") {
		return strings.HasPrefix(o, "Not:") && strings.HasPrefix(g, "Not:") && notCovers(o, g)
	}
	if fold {
		o, g = strings.ToLower(o), strings.ToLower(g)
		if o == g {
			return true
		}
	}
	if !strings.ContainsAny(o, "*?") || len(o) > maxPatternSize || len(g) > maxPatternSize {
		return false
	}
	// memo[i][j]: o[i:] covers g[j:]; 0 unknown, 1 yes, 2 no.
	memo := make([][]uint8, len(o)+1)
	for i := range memo {
		memo[i] = make([]uint8, len(g)+1)
	}
	var m func(i, j int) bool
	m = func(i, j int) bool {
		for {
			if memo[i][j] != 0 {
				return memo[i][j] == 1
			}
			var r bool
			switch {
			case i == len(o):
				r = j == len(g)
			case o[i] == '*':
				r = m(i+1, j) || (j < len(g) && m(i, j+1))
			case j == len(g):
				r = false
			case o[i] == '?':
				r = g[j] != '*' && m(i+1, j+1)
			default:
				r = g[j] != '*' && g[j] != '?' && o[i] == g[j] && m(i+1, j+1)
			}
			if r {
				memo[i][j] = 1
			} else {
				memo[i][j] = 2
			}
			return r
		}
	}
	return m(0, 0)
}
