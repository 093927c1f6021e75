// Empty: cargo needs a target to fetch dependencies for (see Cargo.toml).
