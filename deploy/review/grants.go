package review

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/netip"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/cloud-assembly/assemble/errcode"
)

// Kinds of grant.
const (
	KindIdentity   = "iam-identity"      // an identity's inline or attached policy
	KindManaged    = "managed-policy"    // a managed policy attached to an identity
	KindTrust      = "iam-trust"         // a role's trust (assume-role) policy
	KindResource   = "resource-policy"   // a resource's policy (bucket, queue, topic, ...)
	KindKeyPolicy  = "kms-key-policy"    // a KMS key's policy
	KindLambda     = "lambda-permission" // AWS::Lambda::Permission
	KindIngress    = "ingress"           // a security group's inbound rule
	KindEgress     = "egress"            // a security group's outbound rule
	maxGrants      = 1 << 20             // per template
	maxPatternSize = 1024
)

// ErrTooManyGrants: a template whose statements expand to more grants than
// can be compared; it is treated as broadened.
var ErrTooManyGrants = errcode.New("review_too_many_grants", "too many grants to compare",
	"split the policies: a statement naming thousands of principals, actions and resources at once cannot be reviewed")

// A Grant is one thing a template allows: Principal may do Action on
// Target (a security group rule: Principal is the peer, Action the
// protocol and ports, Target the group), under Condition.
type Grant struct {
	// Resource is the logical ID of the resource that carries it, Type its
	// CloudFormation type, Path the property path of the document or rule.
	Resource string `json:"resource"`
	Type     string `json:"type"`
	Path     string `json:"path"`
	Kind     string `json:"kind"`
	// Scope is what the grant applies to; grants compare within a scope.
	Scope     string `json:"scope"`
	Principal string `json:"principal"`
	Action    string `json:"action"`
	Target    string `json:"target"`
	Condition string `json:"condition,omitempty"` // canonical JSON

	cond     map[string]map[string][]string
	peer     netip.Prefix // a rule's CIDR peer
	proto    string       // a rule's protocol ("all", "tcp", ...)
	from, to int          // a rule's port range
}

// String says what the grant allows, in words:
// "R (AWS::IAM::Role) trust policy: * may sts:AssumeRole on role R",
// "G (AWS::EC2::SecurityGroup) ingress: 0.0.0.0/0 may reach tcp 443-443".
func (g *Grant) String() string {
	where := fmt.Sprintf("%s (%s)", g.Resource, g.Type)
	if g.Path != "" {
		where += " " + g.Path
	}
	if g.Kind == KindIngress || g.Kind == KindEgress {
		if g.Kind == KindEgress {
			return fmt.Sprintf("%s: %s may reach %s on %s", where, g.Target, g.Principal, g.Action)
		}
		return fmt.Sprintf("%s: %s may reach %s on %s", where, g.Principal, g.Target, g.Action)
	}
	s := fmt.Sprintf("%s: %s may %s on %s", where, g.Principal, g.Action, g.Target)
	if g.Kind == KindManaged {
		s = fmt.Sprintf("%s: %s gets managed policy %s", where, g.Principal, g.Target)
	}
	if g.Condition != "" {
		s += " when " + g.Condition
	}
	return s
}

func (g *Grant) key() string {
	return g.Scope + "\x00" + g.Principal + "\x00" + strings.ToLower(g.Action) + "\x00" + g.Target + "\x00" + g.Condition
}

// identityTypes are the resource types whose policies are an identity's
// own: where the policy's principal is the identity it is attached to.
var identityTypes = map[string]bool{
	"AWS::IAM::Role": true, "AWS::IAM::User": true, "AWS::IAM::Group": true,
	"AWS::IAM::Policy": true, "AWS::IAM::ManagedPolicy": true,
	"AWS::IAM::RolePolicy": true, "AWS::IAM::UserPolicy": true, "AWS::IAM::GroupPolicy": true,
	"AWS::SSO::PermissionSet": true,
}

// Grants lists what a template allows. Its error wraps ErrTooManyGrants.
func Grants(t Template) ([]*Grant, error) {
	c := &collector{}
	res := t.Resources()
	for _, id := range slices.Sorted(maps.Keys(res)) {
		r := mapOf(res[id])
		typ, _ := r["Type"].(string)
		props := mapOf(r["Properties"])
		c.resource(id, typ, props)
		if c.n > maxGrants {
			return nil, fmt.Errorf("%w: over %d", ErrTooManyGrants, maxGrants)
		}
	}
	return c.grants, nil
}

type collector struct {
	grants []*Grant
	n      int
}

func (c *collector) add(g *Grant) {
	c.n++
	if c.n <= maxGrants {
		c.grants = append(c.grants, g)
	}
}

func (c *collector) resource(id, typ string, props map[string]any) {
	switch typ {
	case "AWS::EC2::SecurityGroup":
		c.rules(id, typ, "SecurityGroupIngress", KindIngress, "ingress:"+id, props["SecurityGroupIngress"])
		if eg, ok := props["SecurityGroupEgress"]; ok {
			c.rules(id, typ, "SecurityGroupEgress", KindEgress, "egress:"+id, eg)
		} else {
			// No egress rule given: EC2 allows all outbound IPv4.
			c.rules(id, typ, "(default egress)", KindEgress, "egress:"+id, []any{map[string]any{"IpProtocol": "-1", "CidrIp": "0.0.0.0/0"}})
		}
		return
	case "AWS::EC2::SecurityGroupIngress":
		c.rules(id, typ, "", KindIngress, "ingress:"+groupOf(props), props)
		return
	case "AWS::EC2::SecurityGroupEgress":
		c.rules(id, typ, "", KindEgress, "egress:"+groupOf(props), props)
		return
	case "AWS::Lambda::Permission":
		c.lambda(id, typ, props)
		return
	}
	// Managed policies attached to an identity.
	if identityTypes[typ] {
		for i, arn := range list(props["ManagedPolicyArns"]) {
			c.add(&Grant{Resource: id, Type: typ, Path: fmt.Sprintf("ManagedPolicyArns[%d]", i), Kind: KindManaged,
				Scope: "identity:" + id, Principal: id, Action: "attach", Target: canon(arn)})
		}
	}
	// Every policy document, wherever it sits.
	walkDocs(props, "", func(path string, doc map[string]any) {
		c.document(id, typ, path, doc, props)
	})
}

// walkDocs calls fn for every value under v that is a policy document: a
// map holding Statement (or a JSON string of one).
func walkDocs(v any, path string, fn func(path string, doc map[string]any)) {
	switch v := v.(type) {
	case map[string]any:
		if _, ok := v["Statement"]; ok {
			fn(path, v)
			return
		}
		for _, k := range slices.Sorted(maps.Keys(v)) {
			p := k
			if path != "" {
				p = path + "." + k
			}
			walkDocs(v[k], p, fn)
		}
	case []any:
		for i, e := range v {
			walkDocs(e, fmt.Sprintf("%s[%d]", path, i), fn)
		}
	case string:
		t := strings.TrimSpace(v)
		if strings.HasPrefix(t, "{") && strings.Contains(t, "Statement") {
			var doc map[string]any
			if json.Unmarshal([]byte(t), &doc) == nil {
				if _, ok := doc["Statement"]; ok {
					fn(path, doc)
				}
			}
		}
	}
}

// document adds the grants of one policy document's Allow statements.
func (c *collector) document(id, typ, path string, doc, props map[string]any) {
	kind, scopes, self := KindResource, []string{id}, []string(nil)
	target := "*"
	switch {
	case typ == "AWS::IAM::Role" && path == "AssumeRolePolicyDocument":
		kind, scopes, target = KindTrust, []string{"trust:" + id}, "role "+id
	case strings.HasPrefix(typ, "AWS::KMS::"):
		kind, target = KindKeyPolicy, "key "+id
	case identityTypes[typ]:
		kind = KindIdentity
		switch typ {
		case "AWS::IAM::Role", "AWS::IAM::User", "AWS::IAM::Group":
			self = []string{id}
		default:
			for _, k := range []string{"Roles", "Users", "Groups", "RoleName", "UserName", "GroupName"} {
				for _, v := range list(props[k]) {
					self = append(self, refName(v))
				}
			}
			if len(self) == 0 {
				self = []string{id} // attached to nothing (yet): its own scope
			}
		}
		scopes = nil
		for _, s := range self {
			scopes = append(scopes, "identity:"+s)
		}
	}
	for i, st := range list(doc["Statement"]) {
		s := mapOf(st)
		if s == nil {
			continue
		}
		if eff, _ := s["Effect"].(string); eff != "Allow" {
			continue
		}
		spath := fmt.Sprintf("Statement[%d]", i)
		if path != "" {
			spath = path + "." + spath
		}
		var principals []string
		switch {
		case s["NotPrincipal"] != nil:
			principals = []string{notValue(s["NotPrincipal"])}
		case s["Principal"] != nil:
			principals = principalsOf(s["Principal"])
		default:
			principals = self
			if principals == nil {
				principals = []string{"*"}
			}
		}
		actions := values(s, "Action", "NotAction", "*")
		targets := values(s, "Resource", "NotResource", target)
		cond, condText := conditionOf(s["Condition"])
		for si, scope := range scopes {
			ps := principals
			if kind == KindIdentity && s["Principal"] == nil && s["NotPrincipal"] == nil {
				ps = []string{self[si]}
			}
			for _, p := range ps {
				for _, a := range actions {
					for _, t := range targets {
						c.add(&Grant{Resource: id, Type: typ, Path: spath, Kind: kind, Scope: scope,
							Principal: p, Action: a, Target: t, Condition: condText, cond: cond})
						if c.n > maxGrants {
							return
						}
					}
				}
			}
		}
	}
}

// values reads Action/Resource (each value) or NotAction/NotResource (one
// value, "Not:" and the list), else def.
func values(s map[string]any, name, not, def string) []string {
	if v, ok := s[not]; ok {
		return []string{notValue(v)}
	}
	v, ok := s[name]
	if !ok {
		return []string{def}
	}
	var out []string
	for _, e := range list(v) {
		out = append(out, canon(e))
	}
	if len(out) == 0 {
		return []string{def}
	}
	return out
}

// notValue is a NotAction, NotResource or NotPrincipal as one value:
// "Not:" and the sorted JSON list of what it leaves out.
func notValue(v any) string {
	var vs []string
	if m := mapOf(v); m != nil {
		vs = principalsOf(m)
	} else {
		for _, e := range list(v) {
			vs = append(vs, canon(e))
		}
	}
	sort.Strings(vs)
	vs = slices.Compact(vs)
	b, _ := json.Marshal(vs)
	return "Not:" + string(b)
}

// notCovers: "everything but X" covers "everything but Y" when X is a
// subset of Y (literally: a pattern in X must be in Y).
func notCovers(o, g string) bool {
	var ox, gx []string
	if json.Unmarshal([]byte(strings.TrimPrefix(o, "Not:")), &ox) != nil || json.Unmarshal([]byte(strings.TrimPrefix(g, "Not:")), &gx) != nil {
		return false
	}
	for _, x := range ox {
		if !slices.Contains(gx, x) {
			return false
		}
	}
	return true
}

var accountID = regexp.MustCompile(`^[0-9]{12}$`)

// principalsOf reads a Principal: "*" and {"AWS": "*"} are anyone; an
// account number is that account's root; each other value is TYPE:VALUE.
func principalsOf(v any) []string {
	if s, ok := v.(string); ok {
		if s == "*" {
			return []string{"*"}
		}
		return []string{"AWS:" + awsPrincipal(s)}
	}
	m := mapOf(v)
	if m == nil {
		return []string{"?" + canon(v)}
	}
	var out []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		for _, e := range list(m[k]) {
			s := canon(e)
			switch {
			case k == "AWS" && s == "*":
				out = append(out, "*")
			case k == "AWS":
				out = append(out, "AWS:"+awsPrincipal(s))
			default:
				out = append(out, k+":"+s)
			}
		}
	}
	return out
}

func awsPrincipal(s string) string {
	if accountID.MatchString(s) {
		return "arn:aws:iam::" + s + ":root"
	}
	return s
}

// conditionOf reads a Condition block: operator -> key -> values (sorted).
func conditionOf(v any) (map[string]map[string][]string, string) {
	m := mapOf(v)
	if len(m) == 0 {
		return nil, ""
	}
	out := map[string]map[string][]string{}
	for op, kv := range m {
		keys := map[string][]string{}
		for k, vals := range mapOf(kv) {
			var vs []string
			for _, e := range list(vals) {
				vs = append(vs, canon(e))
			}
			sort.Strings(vs)
			keys[strings.ToLower(k)] = vs
		}
		out[op] = keys
	}
	b, _ := json.Marshal(out)
	return out, string(b)
}

func (c *collector) lambda(id, typ string, props map[string]any) {
	p := canon(props["Principal"])
	switch {
	case p == "*":
	case accountID.MatchString(p) || strings.HasPrefix(p, "arn:"):
		p = "AWS:" + awsPrincipal(p)
	default:
		p = "Service:" + p
	}
	cond := map[string]any{}
	for prop, key := range map[string]string{"SourceArn": "aws:SourceArn", "SourceAccount": "aws:SourceAccount", "PrincipalOrgID": "aws:PrincipalOrgID", "FunctionUrlAuthType": "lambda:FunctionUrlAuthType"} {
		if v, ok := props[prop]; ok {
			cond[key] = v
		}
	}
	var cm map[string]map[string][]string
	var text string
	if len(cond) > 0 {
		cm, text = conditionOf(map[string]any{"Equals": cond})
	}
	c.add(&Grant{Resource: id, Type: typ, Path: "", Kind: KindLambda, Scope: "lambda:" + refName(props["FunctionName"]),
		Principal: p, Action: canon(props["Action"]), Target: refName(props["FunctionName"]), Condition: text, cond: cm})
}

// rules adds a security group's rules (one rule, or a list of them).
func (c *collector) rules(id, typ, path, kind, scope string, v any) {
	one := func(rpath string, r map[string]any) {
		proto := protocol(r["IpProtocol"])
		from, to := 0, 65535
		if proto == "icmp" || proto == "icmpv6" {
			to = 255
		}
		if proto != "all" {
			if f, ok := port(r["FromPort"]); ok && f >= 0 {
				from = f
			}
			if t, ok := port(r["ToPort"]); ok && t >= 0 {
				to = t
			}
		}
		action := proto
		if proto != "all" {
			action = fmt.Sprintf("%s %d-%d", proto, from, to)
		}
		g := &Grant{Resource: id, Type: typ, Path: rpath, Kind: kind, Scope: scope, Action: action, proto: proto, from: from, to: to}
		g.Target = strings.TrimPrefix(strings.TrimPrefix(scope, "ingress:"), "egress:")
		switch {
		case r["CidrIp"] != nil || r["CidrIpv6"] != nil:
			cidr := canon(r["CidrIp"])
			if r["CidrIp"] == nil {
				cidr = canon(r["CidrIpv6"])
			}
			if pfx, err := netip.ParsePrefix(cidr); err == nil {
				g.peer = pfx.Masked()
				cidr = g.peer.String()
			}
			g.Principal = cidr
		case r["SourcePrefixListId"] != nil:
			g.Principal = "prefix-list " + refName(r["SourcePrefixListId"])
		case r["DestinationPrefixListId"] != nil:
			g.Principal = "prefix-list " + refName(r["DestinationPrefixListId"])
		case r["SourceSecurityGroupId"] != nil || r["SourceSecurityGroupName"] != nil:
			g.Principal = "security-group " + refName(first(r["SourceSecurityGroupId"], r["SourceSecurityGroupName"]))
		case r["DestinationSecurityGroupId"] != nil:
			g.Principal = "security-group " + refName(r["DestinationSecurityGroupId"])
		default:
			g.Principal = "?"
		}
		c.add(g)
	}
	if m := mapOf(v); m != nil {
		one(path, m)
		return
	}
	for i, r := range list(v) {
		if m := mapOf(r); m != nil {
			one(fmt.Sprintf("%s[%d]", path, i), m)
		}
	}
}

func first(a, b any) any {
	if a != nil {
		return a
	}
	return b
}

func protocol(v any) string {
	p := strings.ToLower(canon(v))
	switch p {
	case "-1", "all", "":
		return "all"
	case "6":
		return "tcp"
	case "17":
		return "udp"
	case "1":
		return "icmp"
	case "58":
		return "icmpv6"
	}
	return p
}

func port(v any) (int, bool) {
	switch v := v.(type) {
	case int64:
		return int(v), true
	case float64:
		return int(v), true
	case int:
		return v, true
	case string:
		n, err := strconv.Atoi(v)
		return n, err == nil
	}
	return 0, false
}

// groupOf names the group a standalone rule belongs to.
func groupOf(props map[string]any) string {
	if v, ok := props["GroupId"]; ok {
		return refName(v)
	}
	return refName(props["GroupName"])
}

// refName is the logical ID a {"Ref": X} or {"Fn::GetAtt": [X, ...]}
// names, else the value's canonical text.
func refName(v any) string {
	if m := mapOf(v); len(m) == 1 {
		if r, ok := m["Ref"].(string); ok {
			return r
		}
		if l := list(m["Fn::GetAtt"]); len(l) > 0 {
			if r, ok := l[0].(string); ok {
				return r
			}
		}
	}
	return canon(v)
}

// canon is a value as text: a string itself, anything else compact JSON
// (sorted keys).
func canon(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	if v == nil {
		return ""
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// list is v as a list: a list itself, one value as a list of one.
func list(v any) []any {
	switch v := v.(type) {
	case nil:
		return nil
	case []any:
		return v
	}
	return []any{v}
}
