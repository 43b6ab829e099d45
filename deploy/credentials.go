package deploy

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials/stscreds"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	"github.com/aws/aws-sdk-go-v2/service/sts"
)

// DefaultQualifier is the AWS CDK's default bootstrap qualifier: its roles
// are cdk-hnb659fds-deploy-role-ACCOUNT-REGION and so on.
const DefaultQualifier = "hnb659fds"

// purpose is what a droplet's calls do, which picks the CDK bootstrap role
// that may do it: stacks deploy, files publish, images publish.
type purpose int

const (
	forStacks purpose = iota
	forFiles
	forImages
)

func (p purpose) bootstrapRole() string {
	switch p {
	case forFiles:
		return "file-publishing-role"
	case forImages:
		return "image-publishing-role"
	}
	return "deploy-role"
}

// credProvider is the one place every call asks for the clients of an
// account and region: the caller's own configuration when the account is
// the caller's, else a role assumed in that account. Which role: the one
// Options.RoleARN names, else the target's deployRole, else the AWS CDK's
// bootstrap role for the purpose (with Options.Qualifier), used only when
// the account's bootstrap version parameter (/cdk-bootstrap/QUALIFIER/
// version, in SSM) says it was bootstrapped. Every account is reached, and
// its identity checked with STS, before anything changes (reach); a call
// never falls back to the caller's own account.
type credProvider struct {
	base       aws.Config
	caller     string // the base credentials' account (STS)
	roleARN    string // Options.RoleARN
	targetRole string // the target's deployRole
	qualifier  string

	mu      sync.Mutex
	reached map[credKey]*reachResult
	regions map[string]*awsSession // by role ARN ("" for the caller's own)
}

type credKey struct {
	account, region string
	p               purpose
}

type reachResult struct {
	once sync.Once
	c    *clients
	err  error
}

func newCredentials(ctx context.Context, opts *Options, target string) (*credProvider, error) {
	s, err := newSession(ctx, opts)
	if err != nil {
		return nil, err
	}
	caller, err := s.callerAccount(ctx)
	if err != nil {
		return nil, err
	}
	q := opts.Qualifier
	if q == "" {
		q = DefaultQualifier
	}
	return &credProvider{base: s.cfg, caller: caller, roleARN: opts.RoleARN, targetRole: target, qualifier: q,
		reached: map[credKey]*reachResult{}, regions: map[string]*awsSession{"": s}}, nil
}

// callerNow asks STS again who the caller's credentials are.
func (c *credProvider) callerNow(ctx context.Context) (string, error) {
	return c.regions[""].callerAccount(ctx)
}

// region is the configured default region ("" when none is).
func (c *credProvider) region() string { return c.base.Region }

// role is the role ARN that reaches account in region for p, and whether
// it is a CDK bootstrap role.
func (c *credProvider) role(account, region string, p purpose) (string, bool) {
	rep := strings.NewReplacer("${AWS::AccountId}", account, "${AWS::Region}", region, "${AWS::Partition}", partition(region))
	switch {
	case c.roleARN != "":
		return rep.Replace(c.roleARN), false
	case c.targetRole != "":
		return rep.Replace(c.targetRole), false
	}
	return fmt.Sprintf("arn:%s:iam::%s:role/cdk-%s-%s-%s-%s", partition(region), account, c.qualifier, p.bootstrapRole(), account, region), true
}

// reach returns the clients for account and region, checking once that
// they are that account's: the caller's own, or a role assumed there. The
// error wraps ErrAccount and says which roles were tried.
func (c *credProvider) reach(ctx context.Context, account, region string, p purpose) (*clients, error) {
	if account == c.caller {
		p = forStacks // the caller's own credentials serve every purpose
	}
	k := credKey{account, region, p}
	c.mu.Lock()
	rr := c.reached[k]
	if rr == nil {
		rr = &reachResult{}
		c.reached[k] = rr
	}
	c.mu.Unlock()
	rr.once.Do(func() { rr.c, rr.err = c.reachOnce(ctx, account, region, p) })
	return rr.c, rr.err
}

func (c *credProvider) reachOnce(ctx context.Context, account, region string, p purpose) (*clients, error) {
	if account == c.caller {
		return c.regions[""].in(region), nil
	}
	arn, bootstrap := c.role(account, region, p)
	c.mu.Lock()
	s := c.regions[arn]
	if s == nil {
		cfg := c.base.Copy()
		stsCfg := c.base.Copy()
		if stsCfg.Region == "" {
			stsCfg.Region = region
		}
		cfg.Credentials = aws.NewCredentialsCache(stscreds.NewAssumeRoleProvider(sts.NewFromConfig(stsCfg), arn, func(o *stscreds.AssumeRoleOptions) {
			o.RoleSessionName = "assemble-deploy"
			o.Duration = time.Hour
		}))
		s = &awsSession{cfg: cfg, regions: map[string]*clients{}}
		c.regions[arn] = s
	}
	c.mu.Unlock()
	how := "role " + arn
	if bootstrap {
		how = fmt.Sprintf("the CDK bootstrap role %s (qualifier %s)", arn, c.qualifier)
	}
	regional := s.cfg.Copy()
	regional.Region = region
	id, err := sts.NewFromConfig(regional).GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
	if err != nil {
		return nil, fmt.Errorf("%w: account %s is not the credentials' (%s), and %s cannot be assumed: %s%s", ErrAccount, account, c.caller, how, apiMessage(err), c.advice(bootstrap))
	}
	if got := aws.ToString(id.Account); got != account {
		return nil, fmt.Errorf("%w: %s gives credentials of account %s (STS GetCallerIdentity), and aws://%s/%s is account %s's: nothing was changed", ErrRoleAccount, how, got, account, region, account)
	}
	if bootstrap {
		name := "/cdk-bootstrap/" + c.qualifier + "/version"
		if _, err := ssm.NewFromConfig(regional).GetParameter(ctx, &ssm.GetParameterInput{Name: aws.String(name)}); err != nil {
			return nil, fmt.Errorf("%w: account %s is not the credentials' (%s), and it was not bootstrapped in %s with qualifier %s (SSM %s: %s)%s", ErrAccount, account, c.caller, region, c.qualifier, name, apiMessage(err), c.advice(true))
		}
	}
	return s.in(region), nil
}

func (c *credProvider) advice(bootstrap bool) string {
	if bootstrap {
		return ": name a role that reaches it (the target's deployRole, or Options.RoleARN), use credentials of that account, or cdk bootstrap it (Options.Qualifier)"
	}
	return ""
}

// partition is the AWS partition of a region.
func partition(region string) string {
	switch {
	case strings.HasPrefix(region, "cn-"):
		return "aws-cn"
	case strings.HasPrefix(region, "us-gov-"):
		return "aws-us-gov"
	}
	return "aws"
}

// reachAll reaches every droplet's account and region (each pair once),
// before anything changes, and gives each droplet its clients. The errors
// name the droplets.
func (c *credProvider) reachAll(ctx context.Context, ds []*droplet) []error {
	var errs []error
	for _, d := range ds {
		cl, err := c.reach(ctx, d.account, d.region, d.kind.purpose())
		if err != nil {
			errs = append(errs, &DropletError{Droplet: d.id, Err: err})
			continue
		}
		d.cl = cl
	}
	return dedupe(errs)
}

// dedupe keeps the first error of each droplet.
func dedupe(errs []error) []error {
	seen := map[string]bool{}
	var out []error
	for _, e := range errs {
		var de *DropletError
		if errors.As(e, &de) {
			if seen[de.Droplet] {
				continue
			}
			seen[de.Droplet] = true
		}
		out = append(out, e)
	}
	return out
}
