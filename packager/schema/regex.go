package schema

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/dlclark/regexp2"

	"github.com/cloud-assembly/assemble/errcode"
)

// DefaultRegexBudget is the time all the regular expression matches of one
// run may take together: the patternProperties of the schemas against the
// keys of every template a build checks (LoadCatalog), or against the
// pointers of the schemas one command validates. A match of a pattern with
// nested repetition, such as ^(a+)+$, can take exponential time; each match
// is also bounded by regexTimeout.
const DefaultRegexBudget = time.Second

// ErrRegexBudget: the regular expressions of the schemas took more than
// their budget (a pattern too slow for the keys it is matched against).
var ErrRegexBudget = errcode.New("schema_regex_time", "regular expressions took too long",
	"a pattern in the schema takes too long to match: simplify it")

// RegexBudget is the time left for the regular expression matches of one
// run. It is safe for concurrent use.
type RegexBudget struct {
	total time.Duration
	left  atomic.Int64 // nanoseconds
}

// NewRegexBudget returns a budget of d for every match made with it.
func NewRegexBudget(d time.Duration) *RegexBudget {
	b := &RegexBudget{total: d}
	b.left.Store(int64(d))
	return b
}

// match reports whether re matches s, within the time left (and at most
// regexTimeout), and takes the time it took off the budget. It sets re's
// MatchTimeout: re must not be matched by two goroutines at once. Past the
// budget it returns an error wrapping ErrRegexBudget.
//
// regexp2 enforces MatchTimeout with a shared clock goroutine that, starved
// on a loaded machine, can jump forward and fail a match that has barely
// started, so a timeout that fires long before its time really elapsed is
// retried; a genuine one is not.
func (b *RegexBudget) match(re *regexp2.Regexp, s string) (bool, error) {
	for attempt := 0; ; attempt++ {
		left := time.Duration(b.left.Load())
		if left <= 0 {
			return false, b.exceeded()
		}
		re.MatchTimeout = min(left, regexTimeout)
		start := time.Now()
		ok, err := re.MatchString(s)
		took := time.Since(start)
		b.left.Add(-int64(took))
		if err == nil {
			return ok, nil
		}
		if attempt == 3 || took >= re.MatchTimeout/2 {
			if re.MatchTimeout < left {
				return false, fmt.Errorf("%w: one match took more than %v", ErrRegexBudget, regexTimeout)
			}
			return false, b.exceeded()
		}
	}
}

func (b *RegexBudget) exceeded() error {
	return fmt.Errorf("%w: more than %v for all the matches of this run", ErrRegexBudget, b.total)
}
