package provenance

import (
	"net/url"
	"strings"
	"time"
)

// A Run is who ran a build and from which source, as a CI system says it
// in its environment. Empty fields are unknown.
type Run struct {
	// System names the CI system: "github-actions", "gitlab-ci",
	// "codebuild", "buildkite", or "" outside any.
	System string
	// BuilderID and InvocationID become builder.id and invocationId.
	BuilderID, InvocationID string
	// Repository is the source repository's URL (no credentials), Ref the
	// ref built (refs/heads/main, refs/tags/v1), Commit its commit.
	Repository, Ref, Commit string
	// StartedOn is when the CI job started, where the system says it.
	StartedOn time.Time
}

// DetectRun reads the CI environment through lookup (os.LookupEnv, or a
// map in tests): GitHub Actions, GitLab CI, AWS CodeBuild and Buildkite,
// in that order; outside them it returns the zero Run. Nothing else is
// read, so a build outside CI says the same every time.
func DetectRun(lookup func(string) (string, bool)) Run {
	if lookup == nil {
		return Run{}
	}
	get := func(k string) string { v, _ := lookup(k); return strings.TrimSpace(v) }
	switch {
	case get("GITHUB_ACTIONS") == "true":
		server := strings.TrimSuffix(firstOf(get("GITHUB_SERVER_URL"), "https://github.com"), "/")
		repo := get("GITHUB_REPOSITORY")
		r := Run{System: "github-actions", Ref: get("GITHUB_REF"), Commit: get("GITHUB_SHA")}
		if repo != "" {
			r.Repository = server + "/" + repo
		}
		// The workflow file at its ref is the build's identity, as
		// GitHub's own provenance names it.
		if wf := get("GITHUB_WORKFLOW_REF"); wf != "" {
			r.BuilderID = server + "/" + wf
		} else if repo != "" {
			r.BuilderID = server + "/" + repo + "/actions"
		}
		if id := get("GITHUB_RUN_ID"); id != "" && repo != "" {
			r.InvocationID = server + "/" + repo + "/actions/runs/" + id + "/attempts/" + firstOf(get("GITHUB_RUN_ATTEMPT"), "1")
		}
		return r
	case get("GITLAB_CI") == "true":
		r := Run{System: "gitlab-ci", Repository: cleanURL(get("CI_PROJECT_URL")), Commit: get("CI_COMMIT_SHA"), InvocationID: get("CI_JOB_URL")}
		switch {
		case get("CI_COMMIT_TAG") != "":
			r.Ref = "refs/tags/" + get("CI_COMMIT_TAG")
		case get("CI_COMMIT_BRANCH") != "":
			r.Ref = "refs/heads/" + get("CI_COMMIT_BRANCH")
		}
		if srv, id := strings.TrimSuffix(get("CI_SERVER_URL"), "/"), get("CI_RUNNER_ID"); srv != "" && id != "" {
			r.BuilderID = srv + "/" + get("CI_PROJECT_PATH") + "/-/runners/" + id
		} else if r.Repository != "" {
			r.BuilderID = r.Repository + "/-/runners"
		}
		if t, err := time.Parse(time.RFC3339, get("CI_JOB_STARTED_AT")); err == nil {
			r.StartedOn = t.UTC()
		}
		return r
	case get("CODEBUILD_BUILD_ARN") != "":
		arn := get("CODEBUILD_BUILD_ARN")
		r := Run{System: "codebuild", InvocationID: arn, Repository: cleanURL(get("CODEBUILD_SOURCE_REPO_URL")), Commit: get("CODEBUILD_RESOLVED_SOURCE_VERSION"), Ref: get("CODEBUILD_WEBHOOK_HEAD_REF")}
		// arn:aws:codebuild:REGION:ACCOUNT:build/PROJECT:BUILD-ID: the
		// project is the builder.
		if i := strings.Index(arn, ":build/"); i > 0 {
			project, _, _ := strings.Cut(arn[i+len(":build/"):], ":")
			r.BuilderID = arn[:i] + ":project/" + project
		}
		return r
	case get("BUILDKITE") == "true":
		r := Run{System: "buildkite", Repository: cleanURL(get("BUILDKITE_REPO")), Commit: get("BUILDKITE_COMMIT")}
		switch {
		case get("BUILDKITE_TAG") != "":
			r.Ref = "refs/tags/" + get("BUILDKITE_TAG")
		case get("BUILDKITE_BRANCH") != "":
			r.Ref = "refs/heads/" + get("BUILDKITE_BRANCH")
		}
		if org, pipe := get("BUILDKITE_ORGANIZATION_SLUG"), get("BUILDKITE_PIPELINE_SLUG"); org != "" && pipe != "" {
			r.BuilderID = "https://buildkite.com/" + org + "/" + pipe
		}
		if u := get("BUILDKITE_BUILD_URL"); u != "" {
			r.InvocationID = u
			if job := get("BUILDKITE_JOB_ID"); job != "" {
				r.InvocationID += "#" + job
			}
		}
		return r
	}
	return Run{}
}

func firstOf(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

// cleanURL drops the user information of a URL (a token in
// https://x-access-token:TOKEN@host/...), which must never reach a
// provenance; scp-like git addresses (git@host:path) are kept as they are.
func cleanURL(s string) string {
	if !strings.Contains(s, "://") {
		// user:secret@host:path is no URL; user@host:path holds no secret.
		if user, rest, ok := strings.Cut(s, "@"); ok && strings.Contains(user, ":") {
			return rest
		}
		return s
	}
	u, err := url.Parse(s)
	if err != nil {
		return ""
	}
	u.User = nil
	return u.String()
}
