package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/lnk-dev/link/harness/window"
	"github.com/lnk-dev/link/model/facts"
)

func (m *Main) modelShowCmd() *cobra.Command {
	var file string
	c := &cobra.Command{
		Use:   "show MODEL",
		Short: "a model's window and longest answer, and where each fact came from",
		Long: `Prints what is known of MODEL (as Link names it: anthropic/claude-opus-5-5,
ollama/qwen3:8b): its window and its longest answer, and where each came
from: your file (~/.lnk/model-facts.toml), which wins field by field, then
what a runtime on this machine runs it with (Ollama at $OLLAMA_HOST, held
to the num_ctx it runs, else $OLLAMA_CONTEXT_LENGTH, else Ollama's default),
then Link's file; a model nobody described gets [window] unknown. Then the
window Link sends it with Link's [window] settings.`,
		Example: `  lnk model show anthropic/claude-opus-5-5
  lnk model show --facts ./facts.toml ollama/qwen3:8b`,
		Args: func(_ *cobra.Command, words []string) error {
			if len(words) != 1 || strings.TrimSpace(words[0]) == "" {
				return badUsage("name one model")
			}
			return nil
		},
		RunE: func(c *cobra.Command, words []string) error {
			return status(modelShow(c.Context(), file, words[0], m.Env, m.Stdout, m.Stderr))
		},
	}
	c.Flags().StringVar(&file, "facts", "", "your facts `file` (default ~/.lnk/model-facts.toml)")
	return c
}

// modelShow prints what is known of the model name; it returns the exit
// status.
func modelShow(ctx context.Context, file, name string, env map[string]string, stdout, stderr io.Writer) int {
	if file == "" {
		p, err := facts.UserFile()
		if err != nil {
			fmt.Fprintf(stderr, "lnk model show: %v\n", err)
			return 1
		}
		file = p
	}
	set := window.Defaults()
	r, err := facts.ForEnv(file, env, set.Unknown)
	if err != nil {
		fmt.Fprintf(stderr, "lnk model show: %v\n", err)
		return 1
	}
	f, rerr := r.Resolve(ctx, name)
	from := func(source string) string {
		switch source {
		case facts.FromUser:
			return "your file, " + file
		case facts.FromRuntime:
			return "the runtime on this machine"
		case facts.FromLink:
			return "Link's facts"
		case facts.FromUnknown:
			return "nobody describes it: [window] unknown"
		}
		return "nobody says"
	}
	fmt.Fprintln(stdout, name)
	fmt.Fprintf(stdout, "  window  %s tokens  (%s)\n", thousands(f.Window), from(f.WindowFrom))
	if f.Answer > 0 {
		fmt.Fprintf(stdout, "  answer  %s tokens  (%s)\n", thousands(f.Answer), from(f.AnswerFrom))
	} else {
		fmt.Fprintf(stdout, "  answer  not known  (%s)\n", from(""))
	}
	if s := f.Runtime; s != nil {
		fmt.Fprintf(stdout, "  %s   runs it with %s tokens (%s), trained for %s\n", s.Runtime, thousands(s.Runs), s.RunsWhy, thousands(s.Trained))
	}
	if rerr != nil {
		fmt.Fprintf(stdout, "  the runtime didn't answer: %v\n", rerr)
	}
	size := set.Size(f.Window)
	fmt.Fprintf(stdout, "  sent    %s tokens  (Link's [window] max %s, held to the model's window; a max you set is sent as set)\n", thousands(size), thousands(set.Max))
	return 0
}

// thousands writes n with commas between each three digits.
func thousands(n int) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return "-" + thousands(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
