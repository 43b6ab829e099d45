package main

import (
	"fmt"

	"github.com/urfave/cli/v2"
)

// completionFlag is urfave/cli's completion protocol: a command line
// ending in it prints the words that may come next, one per line.
const completionFlag = "--generate-bash-completion"

// bashCompletion asks assemble itself for the candidates (the command line
// typed so far, plus completionFlag), as urfave/cli's bash_autocomplete does.
const bashCompletion = `# bash completion for assemble
# Load it with: source <(assemble completion bash)
_assemble_complete() {
  local cur words
  COMPREPLY=()
  cur="${COMP_WORDS[COMP_CWORD]}"
  words=("${COMP_WORDS[@]:0:$COMP_CWORD}")
  if [[ "$cur" == -* ]]; then
    words+=("$cur")
  fi
  local IFS=$'\n'
  COMPREPLY=($(compgen -W "$("${words[0]}" "${words[@]:1}" ` + completionFlag + ` 2>/dev/null)" -- "$cur"))
  return 0
}
complete -o bashdefault -o default -F _assemble_complete assemble
`

// zshCompletion is the same for zsh; files are offered when assemble has
// no candidate.
const zshCompletion = `#compdef assemble
# zsh completion for assemble
# Load it with: assemble completion zsh > "${fpath[1]}/_assemble"; compinit
_assemble() {
  local -a opts
  local cur=${words[-1]}
  if [[ "$cur" == -* ]]; then
    opts=("${(@f)$(${words[@]:0:#words[@]-1} ${cur} ` + completionFlag + ` 2>/dev/null)}")
  else
    opts=("${(@f)$(${words[@]:0:#words[@]-1} ` + completionFlag + ` 2>/dev/null)}")
  fi
  if [[ "${opts[1]}" != "" ]]; then
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

func completionCmd() *cli.Command {
	return &cli.Command{
		Name:            "completion",
		HideHelpCommand: true,
		Usage:           "print the shell completion script for bash, zsh or fish",
		ArgsUsage:       "bash|zsh|fish",
		Description: `Prints a script that completes assemble's commands and flags. Load it with:

   bash:  source <(assemble completion bash)
          (or save it as /etc/bash_completion.d/assemble)
   zsh:   assemble completion zsh > "${fpath[1]}/_assemble" && compinit
   fish:  assemble completion fish > ~/.config/fish/completions/assemble.fish`,
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
			case "fish":
				var err error
				if script, err = c.App.ToFishCompletion(); err != nil {
					return err
				}
			default:
				return usagef("completion: unknown shell %q: use bash, zsh or fish", sh)
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
