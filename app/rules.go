package app

import "mirrorql/model"

// Rules are the operator's settings of what a request may ask: given once
// to the core (New) and read from it by every face (Reader.Rules), so that
// REST and GraphQL cannot disagree on a page size or on the shard of a
// short id.
type Rules struct {
	// Entities fill in the shard and realm of short entity ids.
	Entities model.EntityDefaults
	// Pages is the page-size rule of every list; sizes left at zero take
	// the defaults (PageSizes.WithDefaults).
	Pages PageSizes
}

func (r Rules) withDefaults() Rules {
	r.Pages = r.Pages.WithDefaults()
	return r
}

// A topic id of a path or an argument is taken in two steps
// (docs/reference/behavior.md §2.1): its syntax is checked with the
// request's other values (CheckTopicID), and it is parsed only once all of
// them have passed (Rules.TopicID). So a malformed id is reported among the
// request's other problems, and an id out of range alone.

// CheckTopicID is the first step: r hears `Invalid parameter: topic.id`
// unless raw has an entity id's syntax (an EVM address is not a topic's).
func CheckTopicID(r Reporter, raw string) bool {
	if model.ValidEntityIDSyntax(raw, false) {
		return true
	}
	r.Invalid(ParamTopicID)
	return false
}

// TopicID is the second step: the topic raw names, with the configured
// shard and realm, or the BadRequest `Invalid entity ID "<rebuilt>"`.
func (r Rules) TopicID(raw string) (model.EntityID, error) {
	id, err := r.Entities.ParseEntityID(raw, false)
	if err != nil {
		return 0, EntityIDError(err, "")
	}
	return id, nil
}
