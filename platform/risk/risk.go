// Package risk is the vocabulary of what an action may do: its impact
// class and how it can be undone. The tool catalog classifies tools with
// it and the approval rules read it; it sits below both so neither
// imports the other for four words.
package risk

// Impact is an action's risk class: low for reads, medium for internal
// writes, high for external writes, money, identity and what cannot be
// undone. High impact needs a person's approval.
type Impact string

const (
	ImpactLow    Impact = "low"    // reads
	ImpactMedium Impact = "medium" // internal writes
	ImpactHigh   Impact = "high"   // external writes, money, identity, irreversible: needs approval
)

// Reversibility says how an executed action can be undone.
type Reversibility string

const (
	Reversible    Reversibility = "reversible"
	Compensatable Reversibility = "compensatable" // has a compensating tool: a reversal asks for it
	Irreversible  Reversibility = "irreversible"
)
