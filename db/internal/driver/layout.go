package driver

import (
	"fmt"
	"strconv"
)

// Layout is what the service found out about the database it reads: the
// mirror node's v1 layout (flat tables) or its v2 layout (topic_message and
// transaction partitioned by consensus_timestamp, topic_message_lookup kept
// by the importer, Citus). Only the query layer (db and its readers) acts on it; the rest of the
// service reads the same answers from either.
type Layout struct {
	MessagesPartitioned     bool // topic_message is PARTITION BY RANGE (consensus_timestamp)
	TransactionsPartitioned bool // so is transaction
	LookupRows              bool // topic_message_lookup holds at least one row
	SequenceUnique          bool // a unique index on topic_message (topic_id, sequence_number), as in v1
	Citus                   bool // the citus extension is installed
	// UseLookup: the partitions of a topic's messages come from
	// topic_message_lookup (LookupMode resolved against the database);
	// otherwise they are learned from the partitions themselves.
	UseLookup bool
}

// Partitioned: the reads must go partition by partition.
func (l Layout) Partitioned() bool { return l.MessagesPartitioned || l.TransactionsPartitioned }

// Name is "v1" or "v2", as the mirror node calls them.
func (l Layout) Name() string {
	if l.Partitioned() {
		return "v2"
	}
	return "v1"
}

func (l Layout) String() string {
	return fmt.Sprintf("%s (topic_message partitioned %t, transaction partitioned %t, lookup rows %t, "+
		"unique sequence index %t, citus %t, reading the lookup %t)", l.Name(), l.MessagesPartitioned,
		l.TransactionsPartitioned, l.LookupRows, l.SequenceUnique, l.Citus, l.UseLookup)
}

// Labels are the layout as metric labels.
func (l Layout) Labels() map[string]string {
	b := strconv.FormatBool
	return map[string]string{"layout": l.Name(), "topic_message_partitioned": b(l.MessagesPartitioned),
		"transaction_partitioned": b(l.TransactionsPartitioned), "lookup_rows": b(l.LookupRows),
		"use_lookup": b(l.UseLookup), "citus": b(l.Citus)}
}
