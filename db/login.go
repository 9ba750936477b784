package db

import (
	"context"
	"database/sql/driver"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"mirrorql/saslprep"
)

// A password whose SCRAM form differs from itself logs in in two forms.
//
// PostgreSQL hashes a scram-sha-256 password after SASLprep (its own,
// saslprep.Prepare): a compatibility character folded (ﬁ is fi, ™ is TM,
// a full-width letter ASCII), a soft hyphen or a variation selector dropped.
// pgx prepares the password otherwise (PRECIS OpaqueString: NFC, nothing
// folded or dropped), so handed the password as given, its scram-sha-256
// login fails; handed the prepared one, it logs in, since pgx's
// preparation leaves a SASLprepped string as it is (FuzzPrepare). But md5
// and password logins take the password as given, and which method the
// server asks for is known only once it asks. So such a connection is tried
// with each form offered to the methods it is right for alone (the driver's
// require_auth): the SCRAM form never to md5 or password, the given one
// never to scram-sha-256. A server asking for the method a form is not for
// is refused by the driver before any password is sent, and the other form
// is tried at once. Trying a form and, on a failed login (28P01), the
// other would work too, but would show the server a failed login at every
// first connection, and two per attempt with a wrong password; this way
// the server sees the right form alone. The form that logged in last goes
// first, so that only a pool's first connections pay the extra attempt,
// and again only if the server changes its method.
//
// A password that SASLprep leaves as it is (ASCII, most passwords) or
// refuses (PostgreSQL then hashes it as given) has one form: no extra cost.

// loginForm is one form of the password and the methods it is offered to.
type loginForm struct{ password, requireAuth string }

// loginForms are the forms cfg's password logs in with, SCRAM's first; nil
// when it has one form, which cfg holds already. The driver's own
// require_auth (a URL's, PGREQUIREAUTH) is kept: each form's is narrowed
// from it, and a form it leaves no method is left out.
func loginForms(cfg *pgx.ConnConfig) []loginForm {
	prepared, ok := saslprep.Prepare(cfg.Password)
	if !ok || prepared == cfg.Password {
		return nil
	}
	var forms []loginForm
	if auth, ok := narrowAuth(cfg.RequireAuth, "password", "md5"); ok {
		forms = append(forms, loginForm{prepared, auth})
	}
	if auth, ok := narrowAuth(cfg.RequireAuth, "scram-sha-256"); ok {
		forms = append(forms, loginForm{cfg.Password, auth})
	}
	return forms
}

// narrowAuth is the require_auth list given with the methods drop taken
// out, and whether any is left: a list of methods allowed loses them, a
// list of methods refused ("!md5") or none gains them refused.
func narrowAuth(given string, drop ...string) (string, bool) {
	var list []string
	if given != "" {
		for m := range strings.SplitSeq(given, ",") {
			list = append(list, strings.TrimSpace(m))
		}
	}
	if len(list) > 0 && !strings.HasPrefix(list[0], "!") {
		list = slices.DeleteFunc(list, func(m string) bool { return slices.Contains(drop, m) })
		return strings.Join(list, ","), len(list) > 0
	}
	for _, m := range drop {
		if !slices.Contains(list, "!"+m) {
			list = append(list, "!"+m)
		}
	}
	return strings.Join(list, ","), true
}

// login is the choice between a password's forms, shared by the
// connections of one pool (or the connects of one command).
type login struct {
	forms []loginForm
	last  atomic.Int32 // the form that logged in last
}

// logIn connects with the form that logged in last, and with the other
// when the driver refused the first for the method the server asked for.
func logIn[C any](l *login, connect func(form int) (C, error)) (C, error) {
	first := int(l.last.Load())
	c, err := connect(first)
	if err == nil || len(l.forms) < 2 || !refusedMethod(err) {
		return c, err
	}
	other := 1 - first
	if c, err = connect(other); err == nil {
		l.last.Store(int32(other))
	}
	return c, err
}

// refusedMethod reports whether err is the driver's refusal of the method
// the server asked for (require_auth), rather than the server's of the
// login. pgx gives it no type of its own; TestDatabasePasswords holds this
// to the driver in use (under md5, every password in two forms logs in
// after that refusal).
func refusedMethod(err error) bool {
	return strings.Contains(err.Error(), "require_auth check failed")
}

// connector is the database/sql connector of cfg: stdlib's, or, for a
// password with two forms, one that connects with each as logIn says.
func connector(cfg pgx.ConnConfig, opts ...stdlib.OptionOpenDB) driver.Connector {
	forms := loginForms(&cfg)
	if forms == nil {
		return stdlib.GetConnector(cfg, opts...)
	}
	c := &loginConnector{login: &login{forms: forms}}
	for _, f := range forms {
		fc := cfg
		fc.Password, fc.RequireAuth = f.password, f.requireAuth
		c.conns = append(c.conns, stdlib.GetConnector(fc, opts...))
	}
	return c
}

type loginConnector struct {
	*login
	conns []driver.Connector // one per form
}

func (c *loginConnector) Connect(ctx context.Context) (driver.Conn, error) {
	return logIn(c.login, func(form int) (driver.Conn, error) { return c.conns[form].Connect(ctx) })
}

func (c *loginConnector) Driver() driver.Driver { return c.conns[0].Driver() }

// Connect opens one connection of cfg, as the pool does (pgx.ConnectConfig,
// with the password's forms as connector tries them): for a command's own
// connection beside the pool (seed's).
func Connect(ctx context.Context, cfg *pgx.ConnConfig) (*pgx.Conn, error) {
	forms := loginForms(cfg)
	if forms == nil {
		return pgx.ConnectConfig(ctx, cfg)
	}
	return logIn(&login{forms: forms}, func(form int) (*pgx.Conn, error) {
		fc := cfg.Copy()
		fc.Password, fc.RequireAuth = forms[form].password, forms[form].requireAuth
		return pgx.ConnectConfig(ctx, fc)
	})
}
