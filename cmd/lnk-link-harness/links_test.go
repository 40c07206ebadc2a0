package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/lnk-dev/link/cmd/internal/drivers/driverstest"
)

// providerSDKs are the modules of the providers' SDKs, which the program
// doesn't link: each provider speaks its API itself (model/sse), since the
// two SDKs' package inits cost an idle agent 10 MB (docs/decisions.md,
// "Idle memory").
var providerSDKs = []string{"github.com/openai/openai-go", "github.com/anthropics/anthropic-sdk-go"}

func TestLinksNoProviderSDK(t *testing.T) {
	pkg := driverstest.Module + "/cmd/lnk-link-harness"
	out, err := exec.Command(driverstest.GoTool(), "list", "-deps", pkg).Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, driverstest.Module+"/model/anthropic") || !slices.Contains(deps, driverstest.Module+"/model/openai") {
		t.Fatalf("go list -deps %s gave %d packages, without the providers", pkg, len(deps))
	}
	for _, d := range deps {
		for _, sdk := range providerSDKs {
			if strings.HasPrefix(d, sdk) {
				t.Errorf("%s links %s: a provider speaks its API over model/sse, without its SDK", pkg, d)
			}
		}
	}
}
