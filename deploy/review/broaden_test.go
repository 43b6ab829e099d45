package review

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

func mustParse(t testing.TB, s string) Template {
	t.Helper()
	tpl, err := Parse("t.yaml", []byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return tpl
}

// role is a template with one role: its trust policy, inline policy
// statement and managed policies.
func role(trust, inline, managed string) string {
	s := "Resources:\n  R:\n    Type: AWS::IAM::Role\n    Properties:\n      AssumeRolePolicyDocument:\n        Statement:\n" + indent(trust, 10)
	if inline != "" {
		s += "      Policies:\n        - PolicyName: p\n          PolicyDocument:\n            Statement:\n" + indent(inline, 14)
	}
	if managed != "" {
		s += "      ManagedPolicyArns: " + managed + "\n"
	}
	return s
}

func indent(s string, n int) string {
	pad := strings.Repeat(" ", n)
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		b.WriteString(pad + l + "\n")
	}
	return b.String()
}

const lambdaTrust = `- Effect: Allow
  Principal: {Service: lambda.amazonaws.com}
  Action: sts:AssumeRole`

func resourcePolicy(typ, prop, stmt string) string {
	return "Resources:\n  X:\n    Type: " + typ + "\n    Properties:\n      " + prop + ":\n        Statement:\n" + indent(stmt, 10)
}

func sg(ingress, egress string) string {
	s := "Resources:\n  G:\n    Type: AWS::EC2::SecurityGroup\n    Properties:\n      GroupDescription: g\n"
	if ingress != "" {
		s += "      SecurityGroupIngress:\n" + indent(ingress, 8)
	}
	if egress != "" {
		s += "      SecurityGroupEgress:\n" + indent(egress, 8)
	}
	return s
}

func TestBroadeningTable(t *testing.T) {
	getObj := "- Effect: Allow\n  Action: s3:GetObject\n  Resource: arn:aws:s3:::b/*"
	tcp443 := "- {IpProtocol: tcp, FromPort: 443, ToPort: 443, CidrIp: 10.0.0.0/8}"
	allOut := "- {IpProtocol: '-1', CidrIp: 0.0.0.0/0}"
	cases := []struct {
		name       string
		prev, next string   // prev "" = not deployed
		want       []string // "Resource Kind Principal Action Target" of each broadening grant
	}{
		// IAM inline policies
		{"inline same", role(lambdaTrust, getObj, ""), role(lambdaTrust, getObj, ""), nil},
		{"inline action wildcard", role(lambdaTrust, getObj, ""), role(lambdaTrust, "- Effect: Allow\n  Action: s3:*\n  Resource: arn:aws:s3:::b/*", ""),
			[]string{"R iam-identity R s3:* arn:aws:s3:::b/*"}},
		{"inline action case", role(lambdaTrust, getObj, ""), role(lambdaTrust, "- Effect: Allow\n  Action: S3:getobject\n  Resource: arn:aws:s3:::b/*", ""), nil},
		{"inline narrower resource", role(lambdaTrust, getObj, ""), role(lambdaTrust, "- Effect: Allow\n  Action: s3:GetObject\n  Resource: arn:aws:s3:::b/logs/?", ""), nil},
		{"inline other resource", role(lambdaTrust, getObj, ""), role(lambdaTrust, "- Effect: Allow\n  Action: s3:GetObject\n  Resource: [arn:aws:s3:::b/*, arn:aws:s3:::c/*]", ""),
			[]string{"R iam-identity R s3:GetObject arn:aws:s3:::c/*"}},
		{"inline ? widened to *", role(lambdaTrust, "- Effect: Allow\n  Action: s3:GetObject\n  Resource: arn:aws:s3:::b/?", ""), role(lambdaTrust, "- Effect: Allow\n  Action: s3:GetObject\n  Resource: arn:aws:s3:::b/*", ""),
			[]string{"R iam-identity R s3:GetObject arn:aws:s3:::b/*"}},
		{"inline condition dropped", role(lambdaTrust, getObj+"\n  Condition: {Bool: {aws:SecureTransport: 'true'}}", ""), role(lambdaTrust, getObj, ""),
			[]string{"R iam-identity R s3:GetObject arn:aws:s3:::b/*"}},
		{"inline condition added", role(lambdaTrust, getObj, ""), role(lambdaTrust, getObj+"\n  Condition: {Bool: {aws:SecureTransport: 'true'}}", ""), nil},
		{"inline NotAction", role(lambdaTrust, getObj, ""), role(lambdaTrust, "- Effect: Allow\n  NotAction: iam:*\n  Resource: '*'", ""),
			[]string{`R iam-identity R Not:["iam:*"] *`}},
		{"deny removed is not counted", role(lambdaTrust, getObj+"\n- Effect: Deny\n  Action: s3:DeleteObject\n  Resource: '*'", ""), role(lambdaTrust, getObj, ""), nil},
		{"policy resource attached", "Resources: {}", "Resources:\n  P:\n    Type: AWS::IAM::Policy\n    Properties:\n      PolicyName: p\n      Roles: [!Ref R]\n      PolicyDocument:\n        Statement:\n" + indent("- Effect: Allow\n  Action: '*'\n  Resource: '*'", 10),
			[]string{"P iam-identity R * *"}},
		{"managed policy doc moved to inline", "Resources:\n  P:\n    Type: AWS::IAM::ManagedPolicy\n    Properties:\n      Roles: [!Ref R]\n      PolicyDocument:\n        Statement:\n" + indent(getObj, 10),
			role(lambdaTrust, getObj, ""), []string{"R iam-trust Service:lambda.amazonaws.com sts:AssumeRole role R"}},
		// managed policy attachments
		{"managed attached", role(lambdaTrust, "", ""), role(lambdaTrust, "", "[arn:aws:iam::aws:policy/AdministratorAccess]"),
			[]string{"R managed-policy R attach arn:aws:iam::aws:policy/AdministratorAccess"}},
		{"managed kept", role(lambdaTrust, "", "[arn:aws:iam::aws:policy/ReadOnlyAccess]"), role(lambdaTrust, "", "[arn:aws:iam::aws:policy/ReadOnlyAccess]"), nil},
		// trust policies
		{"trust anyone", role(lambdaTrust, "", ""), role("- Effect: Allow\n  Principal: {AWS: '*'}\n  Action: sts:AssumeRole", "", ""),
			[]string{"R iam-trust * sts:AssumeRole role R"}},
		{"trust star string", role(lambdaTrust, "", ""), role("- Effect: Allow\n  Principal: '*'\n  Action: sts:AssumeRole", "", ""),
			[]string{"R iam-trust * sts:AssumeRole role R"}},
		{"trust account id is its root", role("- Effect: Allow\n  Principal: {AWS: 'arn:aws:iam::111122223333:root'}\n  Action: sts:AssumeRole", "", ""),
			role("- Effect: Allow\n  Principal: {AWS: '111122223333'}\n  Action: sts:AssumeRole", "", ""), nil},
		{"trust other account", role(lambdaTrust, "", ""), role(lambdaTrust+"\n- Effect: Allow\n  Principal: {AWS: '444455556666'}\n  Action: sts:AssumeRole", "", ""),
			[]string{"R iam-trust AWS:arn:aws:iam::444455556666:root sts:AssumeRole role R"}},
		{"new role", "", role(lambdaTrust, "", ""), []string{"R iam-trust Service:lambda.amazonaws.com sts:AssumeRole role R"}},
		// resource policies
		{"bucket policy public", resourcePolicy("AWS::S3::BucketPolicy", "PolicyDocument", "- Effect: Allow\n  Principal: {AWS: arn:aws:iam::111122223333:root}\n  Action: s3:GetObject\n  Resource: arn:aws:s3:::b/*"),
			resourcePolicy("AWS::S3::BucketPolicy", "PolicyDocument", "- Effect: Allow\n  Principal: '*'\n  Action: s3:GetObject\n  Resource: arn:aws:s3:::b/*"),
			[]string{"X resource-policy * s3:GetObject arn:aws:s3:::b/*"}},
		{"queue policy narrower", resourcePolicy("AWS::SQS::QueuePolicy", "PolicyDocument", "- Effect: Allow\n  Principal: {Service: sns.amazonaws.com}\n  Action: sqs:*\n  Resource: '*'"),
			resourcePolicy("AWS::SQS::QueuePolicy", "PolicyDocument", "- Effect: Allow\n  Principal: {Service: sns.amazonaws.com}\n  Action: sqs:SendMessage\n  Resource: '*'\n  Condition: {ArnEquals: {aws:SourceArn: arn:aws:sns:eu-west-1:111122223333:t}}"), nil},
		{"topic policy new service", resourcePolicy("AWS::SNS::TopicPolicy", "PolicyDocument", "- Effect: Allow\n  Principal: {Service: events.amazonaws.com}\n  Action: sns:Publish\n  Resource: '*'"),
			resourcePolicy("AWS::SNS::TopicPolicy", "PolicyDocument", "- Effect: Allow\n  Principal: {Service: [events.amazonaws.com, s3.amazonaws.com]}\n  Action: sns:Publish\n  Resource: '*'"),
			[]string{"X resource-policy Service:s3.amazonaws.com sns:Publish *"}},
		{"logs policy as JSON string", "Resources:\n  X:\n    Type: AWS::Logs::ResourcePolicy\n    Properties:\n      PolicyName: x\n      PolicyDocument: '{\"Statement\":[{\"Effect\":\"Allow\",\"Principal\":{\"Service\":\"es.amazonaws.com\"},\"Action\":\"logs:PutLogEvents\",\"Resource\":\"*\"}]}'",
			"Resources:\n  X:\n    Type: AWS::Logs::ResourcePolicy\n    Properties:\n      PolicyName: x\n      PolicyDocument: '{\"Statement\":[{\"Effect\":\"Allow\",\"Principal\":\"*\",\"Action\":\"logs:PutLogEvents\",\"Resource\":\"*\"}]}'",
			[]string{"X resource-policy * logs:PutLogEvents *"}},
		{"ecr repository policy (unknown type, found by Statement)", "Resources:\n  X:\n    Type: AWS::ECR::Repository\n    Properties: {}",
			resourcePolicy("AWS::ECR::Repository", "RepositoryPolicyText", "- Effect: Allow\n  Principal: '*'\n  Action: ecr:BatchGetImage"),
			[]string{"X resource-policy * ecr:BatchGetImage *"}},
		{"lambda permission public", "Resources:\n  P:\n    Type: AWS::Lambda::Permission\n    Properties: {Action: lambda:InvokeFunction, FunctionName: !Ref F, Principal: s3.amazonaws.com, SourceAccount: '111122223333'}",
			"Resources:\n  P:\n    Type: AWS::Lambda::Permission\n    Properties: {Action: lambda:InvokeFunction, FunctionName: !Ref F, Principal: '*'}",
			[]string{"P lambda-permission * lambda:InvokeFunction F"}},
		// KMS key policies
		{"key policy same", resourcePolicy("AWS::KMS::Key", "KeyPolicy", "- Effect: Allow\n  Principal: {AWS: '111122223333'}\n  Action: kms:*\n  Resource: '*'"),
			resourcePolicy("AWS::KMS::Key", "KeyPolicy", "- Effect: Allow\n  Principal: {AWS: arn:aws:iam::111122223333:root}\n  Action: kms:*\n  Resource: '*'"), nil},
		{"key policy decrypt to anyone", resourcePolicy("AWS::KMS::Key", "KeyPolicy", "- Effect: Allow\n  Principal: {AWS: '111122223333'}\n  Action: kms:*\n  Resource: '*'"),
			resourcePolicy("AWS::KMS::Key", "KeyPolicy", "- Effect: Allow\n  Principal: {AWS: '111122223333'}\n  Action: kms:*\n  Resource: '*'\n- Effect: Allow\n  Principal: {AWS: '*'}\n  Action: kms:Decrypt\n  Resource: '*'"),
			[]string{"X kms-key-policy * kms:Decrypt *"}},
		{"replica key policy", resourcePolicy("AWS::KMS::ReplicaKey", "KeyPolicy", "- Effect: Allow\n  Principal: {AWS: '111122223333'}\n  Action: kms:Decrypt\n  Resource: '*'"),
			resourcePolicy("AWS::KMS::ReplicaKey", "KeyPolicy", "- Effect: Allow\n  Principal: {AWS: '111122223333'}\n  Action: kms:*\n  Resource: '*'"),
			[]string{"X kms-key-policy AWS:arn:aws:iam::111122223333:root kms:* *"}},
		// security groups
		{"sg same", sg(tcp443, allOut), sg(tcp443, allOut), nil},
		{"sg open to the world", sg(tcp443, allOut), sg("- {IpProtocol: tcp, FromPort: 443, ToPort: 443, CidrIp: 0.0.0.0/0}", allOut),
			[]string{"G ingress 0.0.0.0/0 tcp 443-443 G"}},
		{"sg narrower cidr", sg(tcp443, allOut), sg("- {IpProtocol: tcp, FromPort: 443, ToPort: 443, CidrIp: 10.1.2.0/24}", allOut), nil},
		{"sg cidr not masked", sg(tcp443, allOut), sg("- {IpProtocol: tcp, FromPort: 443, ToPort: 443, CidrIp: 10.9.9.9/8}", allOut), nil},
		{"sg v6 world", sg(tcp443, allOut), sg(tcp443+"\n- {IpProtocol: tcp, FromPort: 443, ToPort: 443, CidrIpv6: '::/0'}", allOut),
			[]string{"G ingress ::/0 tcp 443-443 G"}},
		{"sg v4 does not cover v6", sg("- {IpProtocol: '-1', CidrIp: 0.0.0.0/0}", allOut), sg("- {IpProtocol: tcp, FromPort: 22, ToPort: 22, CidrIpv6: '2001:db8::/32'}", allOut),
			[]string{"G ingress 2001:db8::/32 tcp 22-22 G"}},
		{"sg port range widened", sg(tcp443, allOut), sg("- {IpProtocol: tcp, FromPort: 0, ToPort: 65535, CidrIp: 10.0.0.0/8}", allOut),
			[]string{"G ingress 10.0.0.0/8 tcp 0-65535 G"}},
		{"sg all protocols", sg(tcp443, allOut), sg("- {IpProtocol: '-1', CidrIp: 10.0.0.0/8}", allOut),
			[]string{"G ingress 10.0.0.0/8 all G"}},
		{"sg protocol number", sg(tcp443, allOut), sg("- {IpProtocol: '6', FromPort: 443, ToPort: 443, CidrIp: 10.0.0.0/8}", allOut), nil},
		{"sg prefix list changed", sg("- {IpProtocol: tcp, FromPort: 443, ToPort: 443, SourcePrefixListId: pl-111}", allOut), sg("- {IpProtocol: tcp, FromPort: 443, ToPort: 443, SourcePrefixListId: pl-222}", allOut),
			[]string{"G ingress prefix-list pl-222 tcp 443-443 G"}},
		{"sg egress prefix list kept", sg("", "- {IpProtocol: tcp, FromPort: 443, ToPort: 443, DestinationPrefixListId: pl-1}"), sg("", "- {IpProtocol: tcp, FromPort: 443, ToPort: 443, DestinationPrefixListId: pl-1}"), nil},
		{"sg egress removed means all", sg("", "- {IpProtocol: tcp, FromPort: 443, ToPort: 443, CidrIp: 10.0.0.0/8}"), sg("", ""),
			[]string{"G egress 0.0.0.0/0 all G"}},
		{"sg egress widened", sg("", "- {IpProtocol: tcp, FromPort: 443, ToPort: 443, CidrIp: 10.0.0.0/8}"), sg("", "- {IpProtocol: tcp, FromPort: 443, ToPort: 443, CidrIp: 0.0.0.0/0}"),
			[]string{"G egress 0.0.0.0/0 tcp 443-443 G"}},
		{"sg standalone ingress", "Resources: {}", "Resources:\n  I:\n    Type: AWS::EC2::SecurityGroupIngress\n    Properties: {GroupId: !GetAtt G.GroupId, IpProtocol: tcp, FromPort: 22, ToPort: 22, CidrIp: 0.0.0.0/0}",
			[]string{"I ingress 0.0.0.0/0 tcp 22-22 G"}},
		{"sg standalone egress from another group", "Resources: {}", "Resources:\n  E:\n    Type: AWS::EC2::SecurityGroupEgress\n    Properties: {GroupId: !Ref G, IpProtocol: tcp, FromPort: 5432, ToPort: 5432, DestinationSecurityGroupId: !Ref DB}",
			[]string{"E egress security-group DB tcp 5432-5432 G"}},
		{"sg rule moved inline to standalone", sg(tcp443, allOut), sg("", allOut) + "  I:\n    Type: AWS::EC2::SecurityGroupIngress\n    Properties: {GroupId: !Ref G, IpProtocol: tcp, FromPort: 443, ToPort: 443, CidrIp: 10.0.0.0/8}", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var prev Template
			if tc.prev != "" {
				prev = mustParse(t, tc.prev)
			}
			got, err := Broadening(prev, mustParse(t, tc.next))
			if err != nil {
				t.Fatal(err)
			}
			var lines []string
			for _, g := range got {
				lines = append(lines, strings.Join([]string{g.Resource, g.Kind, g.Principal, g.Action, g.Target}, " "))
			}
			if strings.Join(lines, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("broadening:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

func TestPatternCovers(t *testing.T) {
	for _, tc := range []struct {
		o, g string
		want bool
	}{
		{"*", "anything*", true},
		{"s3:*", "s3:Get*", true},
		{"s3:Get*", "s3:*", false},
		{"s3:Get?bject", "s3:GetObject", true},
		{"s3:Get?bject", "s3:Get*bject", false},
		{"a*b", "a?b", true},
		{"a?b", "a?b", true},
		{"a?b", "a*b", false},
		{"arn:*:b/*", "arn:aws:b/x/y", true},
		{"abc", "ab?", false},
		{"**", "*", true},
	} {
		if got := patternCovers(tc.o, tc.g, false); got != tc.want {
			t.Errorf("patternCovers(%q, %q) = %v, want %v", tc.o, tc.g, got, tc.want)
		}
	}
}

// TestPatternCoversSound: when o covers g, o matches every string g
// matches (checked on strings made from g by filling its wildcards).
func TestPatternCoversSound(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alpha := "ab*?"
	gen := func() string {
		n := rng.IntN(6)
		b := make([]byte, n)
		for i := range b {
			b[i] = alpha[rng.IntN(len(alpha))]
		}
		return string(b)
	}
	fill := func(g string) string {
		var b strings.Builder
		for _, c := range g {
			switch c {
			case '*':
				for n := rng.IntN(3); n > 0; n-- {
					b.WriteByte("ab"[rng.IntN(2)])
				}
			case '?':
				b.WriteByte("ab"[rng.IntN(2)])
			default:
				b.WriteRune(c)
			}
		}
		return b.String()
	}
	for i := 0; i < 20000; i++ {
		o, g := gen(), gen()
		if !patternCovers(o, g, false) {
			continue
		}
		for k := 0; k < 5; k++ {
			s := fill(g)
			if !globMatch(o, s) {
				t.Fatalf("patternCovers(%q, %q) but %q matches %q and not %q", o, g, s, g, o)
			}
		}
	}
}

func globMatch(p, s string) bool {
	if p == "" {
		return s == ""
	}
	switch p[0] {
	case '*':
		return globMatch(p[1:], s) || (s != "" && globMatch(p, s[1:]))
	case '?':
		return s != "" && globMatch(p[1:], s[1:])
	}
	return s != "" && p[0] == s[0] && globMatch(p[1:], s[1:])
}

// randomTemplate makes a template of policy documents and security group
// rules from small vocabularies, so that overlaps are common.
func randomTemplate(rng *rand.Rand) map[string]any {
	pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	some := func(xs ...string) []any {
		n := 1 + rng.IntN(3)
		out := make([]any, n)
		for i := range out {
			out[i] = xs[rng.IntN(len(xs))]
		}
		return out
	}
	stmt := func(withPrincipal bool) map[string]any {
		s := map[string]any{"Effect": pick("Allow", "Allow", "Deny"),
			"Action":   some("s3:GetObject", "s3:*", "sqs:Send*", "*", "kms:Decrypt"),
			"Resource": some("*", "arn:aws:s3:::b/*", "arn:aws:s3:::b/a?", "arn:aws:sqs:*:1:q")}
		if withPrincipal {
			s["Principal"] = map[string]any{"AWS": some("*", "111122223333", "arn:aws:iam::1:role/r*")}
		}
		if rng.IntN(3) == 0 {
			s["Condition"] = map[string]any{"StringEquals": map[string]any{"aws:SourceAccount": pick("1", "2")}}
		}
		if rng.IntN(5) == 0 {
			s["NotAction"] = s["Action"]
			delete(s, "Action")
		}
		return s
	}
	doc := func(withPrincipal bool) map[string]any {
		n := 1 + rng.IntN(4)
		st := make([]any, n)
		for i := range st {
			st[i] = stmt(withPrincipal)
		}
		return map[string]any{"Statement": st}
	}
	rule := func() any {
		r := map[string]any{"IpProtocol": pick("tcp", "udp", "-1", "6")}
		from := int64(rng.IntN(3) * 100)
		r["FromPort"], r["ToPort"] = from, from+int64(rng.IntN(200))
		switch rng.IntN(3) {
		case 0:
			r["CidrIp"] = pick("0.0.0.0/0", "10.0.0.0/8", "10.1.0.0/16", "192.168.1.7/32")
		case 1:
			r["CidrIpv6"] = pick("::/0", "2001:db8::/32", "2001:db8:1::/48")
		default:
			r["SourcePrefixListId"] = pick("pl-1", "pl-2")
		}
		return r
	}
	rules := func() []any {
		out := make([]any, 1+rng.IntN(4))
		for i := range out {
			out[i] = rule()
		}
		return out
	}
	return map[string]any{"Resources": map[string]any{
		"R": map[string]any{"Type": "AWS::IAM::Role", "Properties": map[string]any{
			"AssumeRolePolicyDocument": doc(true),
			"Policies":                 []any{map[string]any{"PolicyName": "p", "PolicyDocument": doc(false)}},
			"ManagedPolicyArns":        some("arn:aws:iam::aws:policy/A", "arn:aws:iam::aws:policy/B"),
		}},
		"B": map[string]any{"Type": "AWS::S3::BucketPolicy", "Properties": map[string]any{"PolicyDocument": doc(true)}},
		"K": map[string]any{"Type": "AWS::KMS::Key", "Properties": map[string]any{"KeyPolicy": doc(true)}},
		"G": map[string]any{"Type": "AWS::EC2::SecurityGroup", "Properties": map[string]any{"SecurityGroupIngress": rules(), "SecurityGroupEgress": rules()}},
	}}
}

// narrow returns a copy of v with parts taken away: statements and rules
// dropped, values dropped from Action/Resource/Principal lists, conditions
// added, CIDRs and port ranges made smaller. What it returns allows a
// subset of what v allows.
func narrow(rng *rand.Rand, v any, key string) any {
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range v {
			out[k] = narrow(rng, e, k)
		}
		if _, ok := out["Effect"]; ok && rng.IntN(3) == 0 && out["Condition"] == nil {
			out["Condition"] = map[string]any{"Bool": map[string]any{"aws:SecureTransport": "true"}}
		}
		if c, ok := out["CidrIp"].(string); ok && c == "0.0.0.0/0" && rng.IntN(2) == 0 {
			out["CidrIp"] = "10.0.0.0/8"
		}
		if f, ok := out["FromPort"].(int64); ok && rng.IntN(2) == 0 {
			if t, ok := out["ToPort"].(int64); ok && t > f {
				out["FromPort"] = f + 1
			}
		}
		return out
	case []any:
		if strings.HasPrefix(key, "Not") {
			// everything but these: leaving out more allows less
			return append(append([]any{}, v...), "ec2:RunInstances")
		}
		var out []any
		for _, e := range v {
			// keep at least one element of a list the key needs
			if rng.IntN(3) == 0 && (len(out) > 0 || key == "Statement" || key == "SecurityGroupIngress" || key == "ManagedPolicyArns" || key == "Policies") {
				continue
			}
			out = append(out, narrow(rng, e, key))
		}
		if out == nil {
			out = []any{}
		}
		if key == "SecurityGroupEgress" && len(out) == 0 {
			return v // an empty egress list is not "no egress": keep the rules
		}
		return out
	}
	return v
}

func TestBroadeningProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 31))
	for i := 0; i < 2000; i++ {
		doc := Template(randomTemplate(rng))
		if got, err := Broadening(doc, doc); err != nil || len(got) != 0 {
			t.Fatalf("case %d: a template broadens itself: %v %v", i, describe(got), err)
		}
		sub := Template(narrow(rng, map[string]any(doc), "").(map[string]any))
		if got, err := Broadening(doc, sub); err != nil || len(got) != 0 {
			t.Fatalf("case %d: a narrowed template broadens: %v %v\nfrom %v\nto %v", i, describe(got), err, doc, sub)
		}
	}
}

func TestBroadeningBounded(t *testing.T) {
	var acts, res []any
	for i := 0; i < 1100; i++ {
		acts = append(acts, fmt.Sprintf("s3:A%d", i))
		res = append(res, fmt.Sprintf("arn:aws:s3:::b%d", i))
	}
	tpl := Template{"Resources": map[string]any{"B": map[string]any{"Type": "AWS::S3::BucketPolicy", "Properties": map[string]any{
		"PolicyDocument": map[string]any{"Statement": []any{map[string]any{"Effect": "Allow", "Principal": "*", "Action": acts, "Resource": res}}}}}}}
	if _, err := Broadening(nil, tpl); !errors.Is(err, ErrTooManyGrants) {
		t.Fatalf("err = %v, want ErrTooManyGrants", err)
	}
}

func describe(gs []*Grant) string {
	var s []string
	for _, g := range gs {
		s = append(s, fmt.Sprintf("%s %s %s %s %s %s", g.Resource, g.Kind, g.Principal, g.Action, g.Target, g.Condition))
	}
	return strings.Join(s, "; ")
}
