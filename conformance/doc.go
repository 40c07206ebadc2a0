// Package conformance is the endpoint contract's conformance kit: one named
// check per rule of spec/endpoint.txt, run against any endpoint over the
// wire, as Link's bridges reach it. An endpoint's own tests call Run(t,
// target), as testing/fstest's callers do; lnk conformance calls Check and
// prints one line per check.
//
// A check that needs a hook the target doesn't offer (a tool call to
// trigger, a recording of what its model saw, an answer left for recover)
// is reported as not run, never as passed.
package conformance
