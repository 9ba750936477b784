package db

import (
	"github.com/jackc/pgx/v5/pgtype"
)

// Nullable columns as model values (topics.go, schedules.go); the message
// rows are driver's (db/internal/driver/scan.go).

// nullable is a nullable bigint column as a pointer to its value.
func nullable[T ~int64](v pgtype.Int8) *T {
	if !v.Valid {
		return nil
	}
	x := T(v.Int64)
	return &x
}

// nullableBool is a nullable boolean column as a pointer to its value.
func nullableBool(v pgtype.Bool) *bool {
	if !v.Valid {
		return nil
	}
	return &v.Bool
}

// nullableText is a nullable text column as a pointer to its value.
func nullableText(v pgtype.Text) *string {
	if !v.Valid {
		return nil
	}
	return &v.String
}
