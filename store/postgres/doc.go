// Package postgres stores sessions in google-adk's DatabaseSessionService
// tables on PostgreSQL (github.com/jackc/pgx/v5), so that adkhost replicas
// and google-adk 2.13 apps share one database and each other's sessions.
//
// Open connects (retrying while the server is not up yet) and runs the
// versioned migrations the database lacks. DB.Sessions is a
// session.Service; README.md beside this file documents the tables and
// the promises.
package postgres
