package main

import (
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/urfave/cli/v2"
)

// completionFlag ends the command line a completion script runs: the
// words typed so far, the one being typed last (maybe empty), then this
// flag. assemble then prints the candidates for the last word, one per
// line, and runs nothing (see complete).
const completionFlag = "--generate-bash-completion"

// complete prints the candidates for the last of words (the command line
// after "assemble", the word being typed last): the flags of the command
// named so far when it starts with "-", else its subcommands. It prints
// nothing, so that the shell offers file names, after a flag that takes a
// value, after "--", and where a file argument goes.
func complete(w io.Writer, app *cli.App, words []string) {
	if len(words) == 0 {
		words = []string{""}
	}
	cur, typed := words[len(words)-1], words[:len(words)-1]
	flags, cmds := app.Flags, app.Commands
	positional := false
	for i := 0; i < len(typed); i++ {
		a := typed[i]
		switch {
		case a == "--":
			return // file names only from here on
		case len(a) > 1 && a[0] == '-':
			if name := strings.TrimLeft(a, "-"); !strings.Contains(name, "=") && takesValue(flags, name) {
				if i == len(typed)-1 {
					return // cur is this flag's value
				}
				i++
			}
		case !positional && findCommand(cmds, a) != nil:
			cmd := findCommand(cmds, a)
			flags = cmd.Flags
			if cmd.Name != "help" { // help takes the commands as they stand
				cmds = cmd.Subcommands
			}
		default:
			positional = true
		}
	}
	if strings.HasPrefix(cur, "-") {
		for _, f := range append(flags, cli.HelpFlag) {
			if v, ok := f.(cli.VisibleFlag); ok && !v.IsVisible() {
				continue
			}
			for _, n := range f.Names() {
				if len(n) > 1 {
					n = "--" + n
				} else {
					n = "-" + n
				}
				if strings.HasPrefix(n, cur) {
					fmt.Fprintln(w, n)
				}
			}
		}
		return
	}
	if positional {
		return
	}
	for _, c := range cmds {
		if c.Hidden {
			continue
		}
		for _, n := range c.Names() {
			if strings.HasPrefix(n, cur) {
				fmt.Fprintln(w, n)
			}
		}
	}
}

// bashCompletion asks assemble itself for the candidates: the words typed
// so far and the one being typed, then completionFlag. Nothing offered
// means file names (-o default).
const bashCompletion = `# bash completion for assemble
# Load it with: source <(assemble completion bash)
_assemble_complete() {
  local IFS=$'\n'
  COMPREPLY=($(compgen -W "$("${COMP_WORDS[0]}" "${COMP_WORDS[@]:1:$COMP_CWORD}" ` + completionFlag + ` 2>/dev/null)" -- "${COMP_WORDS[COMP_CWORD]}"))
  return 0
}
complete -o bashdefault -o default -F _assemble_complete assemble
`

// zshCompletion is the same for zsh; files are offered when assemble has
// no candidate.
const zshCompletion = `#compdef assemble
# zsh completion for assemble
# Load it with: mkdir -p ~/.zfunc && assemble completion zsh > ~/.zfunc/_assemble
# and in ~/.zshrc, before compinit: fpath=(~/.zfunc $fpath)
_assemble() {
  local -a opts
  opts=("${(@f)$("${words[1]}" "${(@)words[2,CURRENT]}" ` + completionFlag + ` 2>/dev/null)}")
  if [[ -n "${opts[1]}" ]]; then
    _describe 'values' opts
  else
    _files
  fi
}
if [[ "$funcstack[1]" == "_assemble" ]]; then
  _assemble "$@"
else
  compdef _assemble assemble
fi
`

// powershellCompletion registers a native argument completer that asks
// assemble for candidates as the other scripts do; when there is none,
// PowerShell offers file names.
const powershellCompletion = `# PowerShell completion for assemble
# Load it with: assemble completion powershell | Out-String | Invoke-Expression
# (add that line to $PROFILE to keep it)
Register-ArgumentCompleter -Native -CommandName assemble, assemble.exe -ScriptBlock {
  param($wordToComplete, $commandAst, $cursorPosition)
  $words = @($commandAst.CommandElements | Select-Object -Skip 1 | ForEach-Object { $_.ToString() })
  if ($wordToComplete -eq '') { $words += '' }
  $candidates = & $commandAst.CommandElements[0].ToString() @words ` + completionFlag + ` 2>$null
  if (-not $candidates) { return }
  $candidates | Where-Object { $_ -like "$wordToComplete*" } | ForEach-Object {
    [System.Management.Automation.CompletionResult]::new($_, $_, 'ParameterValue', $_)
  }
}
`

func completionCmd() *cli.Command {
	return &cli.Command{
		Name:            "completion",
		HideHelpCommand: true,
		Usage:           "print the shell completion script for bash, zsh, fish or PowerShell",
		ArgsUsage:       "bash|zsh|fish|powershell",
		Description: `Prints a script that completes assemble's commands and flags. Load it with:

   bash:  source <(assemble completion bash)
          (or save it as /etc/bash_completion.d/assemble)
   zsh:   mkdir -p ~/.zfunc && assemble completion zsh > ~/.zfunc/_assemble
          and in ~/.zshrc, before compinit: fpath=(~/.zfunc $fpath)
   fish:  assemble completion fish > ~/.config/fish/completions/assemble.fish
   PowerShell: assemble completion powershell | Out-String | Invoke-Expression
          (add that line to $PROFILE)`,
		Flags: []cli.Flag{jsonFlag},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return withHint(usagef("completion takes one SHELL argument, got %d", c.NArg()), "example: assemble completion bash")
			}
			var script string
			switch sh := c.Args().First(); sh {
			case "bash":
				script = bashCompletion
			case "zsh":
				script = zshCompletion
			case "powershell", "pwsh":
				script = powershellCompletion
			case "fish":
				var err error
				if script, err = c.App.ToFishCompletion(); err != nil {
					return err
				}
				// Descriptions are the flags' usage: `FILE` marks the
				// placeholder for --help, and would be shown as typed.
				script = strings.ReplaceAll(script, "`", "")
			default:
				return usagef("completion: unknown shell %q: use bash, zsh, fish or powershell", sh)
			}
			if c.Bool("json") {
				return printJSON(c, struct {
					Shell  string `json:"shell"`
					Script string `json:"script"`
				}{c.Args().First(), script})
			}
			fmt.Fprint(c.App.Writer, script)
			return nil
		},
	}
}

func manCmd() *cli.Command {
	return &cli.Command{
		Name:            "man",
		HideHelpCommand: true,
		Usage:           "print the manual page (roff)",
		Description: `Prints assemble(1) as a roff manual page, generated from the commands'
help. Read it with: assemble man | man -l -
Install it with: assemble man > /usr/local/share/man/man1/assemble.1`,
		Flags: []cli.Flag{jsonFlag},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef("man takes no arguments, got %d", c.NArg())
			}
			page, err := c.App.ToManWithSection(1)
			if err != nil {
				return err
			}
			page += manFindings() + manEnvironment
			// A manual page is read without the repository: name the URL.
			page = bareDocsJSON.ReplaceAllString(page, "${1}"+jsonDocsURL)
			if c.Bool("json") {
				return printJSON(c, struct {
					Section int    `json:"section"`
					Page    string `json:"page"`
				}{1, page})
			}
			fmt.Fprint(c.App.Writer, page)
			return nil
		},
	}
}

// bareDocsJSON is a mention of the repository's docs/json folder.
var bareDocsJSON = regexp.MustCompile(`(^|[^/])docs/json`)

// jsonDocsURL is where the --json objects' schemas are published.
const jsonDocsURL = "https://github.com/cloud-assembly/assemble/tree/main/docs/json"

// manFindings is the manual page's FINDINGS section, which --strict's
// help refers to: the assembly check's rules, as verify --help lists them.
func manFindings() string {
	head, table, _ := strings.Cut(findingsHelp(), "\n")
	var b strings.Builder
	b.WriteString(".SH FINDINGS\n" + roffText(strings.TrimPrefix(strings.TrimSuffix(head, ":"), "FINDINGS ")) + ".\n.PP\n.nf\n")
	for _, line := range strings.Split(table, "\n") {
		b.WriteString(roffText(line) + "\n")
	}
	b.WriteString(".fi\n")
	return b.String()
}

// roffText escapes s as a line of roff text.
func roffText(s string) string {
	s = strings.NewReplacer(`\`, `\e`, "-", `\-`).Replace(s)
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	return s
}

// manEnvironment are the manual page's ENVIRONMENT and EXIT STATUS
// sections, which no command's help holds.
const manEnvironment = `.SH ENVIRONMENT
.TP
.B ASSEMBLE_SIGNING_KEY
a secret key (armored) for sign, attest and build when no \-\-key is given
.TP
.B ASSEMBLE_PASSPHRASE
the passphrase of that key (else \-\-passphrase\-file, or a prompt at a terminal)
.TP
.B ASSEMBLE_GPG
the gpg program sign \-\-gpg runs (default: gpg on PATH); GNUPGHOME is honoured
.TP
.B ASSEMBLE_TIMEOUT
\-\-timeout: one limit on all the work with remote locations
.TP
.B ASSEMBLE_NO_WARN_UNVERIFIED
1 silences inspect's and graph's warning about a signed assembly they do not verify
.TP
.B AWS_PROFILE, AWS_REGION, AWS_ENDPOINT_URL, ...
AWS is configured the standard way (the SDK's default chain) for s3:// locations and deploy
.TP
.B DOCKER_CONFIG, DOCKER_HOST
registry credentials for oci:// locations and images; the Docker engine that builds images
.TP
.B SOURCE_DATE_EPOCH
the time build writes into every entry (reproducible builds)
.SH EXIT STATUS
.TP
.B 0
success
.TP
.B 1
failure: an invalid, tampered or untrusted assembly, a refused or failed deploy, an I/O error
.TP
.B 2
usage error (bad flags or arguments)
.TP
.B 130
interrupted (Ctrl\-C): no new step was started
`
