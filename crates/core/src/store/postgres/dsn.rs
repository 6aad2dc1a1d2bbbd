//! Connection strings, read as node-postgres reads them (the rules of
//! `pg-connection-string`): a URL's query is form-encoded (`+` is a space),
//! user and password are percent-decoded, the database keeps its reserved
//! escapes (`decodeURI`), and later query parameters win. What a store
//! cannot show of a DSN (the password) never reaches a message.

use std::fmt::Display;
use std::str::FromStr;
use std::time::Duration;

use deadpool_postgres::PoolError;
use percent_encoding::percent_decode_str;
use tokio_postgres::config::{Host, SslMode};
use tokio_postgres::Config;
use tokio_postgres_rustls::MakeRustlsConnect;

use super::conn::driver_cause;
use crate::error::{Error, Result};

/// libpq waits forever by default; a store should report an unreachable host.
const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// A parsed connection string and a password-free description of its target.
#[derive(Clone)]
pub struct Dsn {
    pub config: Config,
    pub tls: MakeRustlsConnect,
    target: String,
    /// The server's certificate is checked (`verify-ca`/`verify-full`, `ssl=true`).
    verify: bool,
}

impl Dsn {
    /// Accepts a `postgres://` (or `postgresql://`) URL read as
    /// node-postgres reads it (pg-connection-string's rules, `url_to_conninfo`),
    /// a socket directory with a database (`/run/postgresql db`), or a libpq
    /// `key=value` list. The raw string is never echoed: it may hold the password.
    pub fn parse(dsn: &str) -> Result<Dsn> {
        Dsn::parse_in(dsn, |name| std::env::var(name).ok())
    }

    fn parse_in(dsn: &str, env: impl Fn(&str) -> Option<String>) -> Result<Dsn> {
        let (conninfo, verify) = match url_to_conninfo(dsn)? {
            Some(converted) => converted,
            None => super::tls::split_verification(dsn),
        };
        let mut config = Config::from_str(&conninfo).map_err(|e| invalid(e.to_string()))?;
        fill_from_env(&mut config, env)?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(DEFAULT_CONNECT_TIMEOUT);
        }
        let target = describe(&config);
        Ok(Dsn {
            config,
            tls: super::tls::connector(verify),
            target,
            verify,
        })
    }

    /// What a connection string resolves to, as JSON, the environment left
    /// out (the DSN table test compares it with node-postgres's parser).
    pub fn fields(dsn: &str) -> Result<serde_json::Value> {
        let parsed = Dsn::parse_in(dsn, |_| None)?;
        let config = &parsed.config;
        let sslmode = match (config.get_ssl_mode(), parsed.verify) {
            (SslMode::Disable, _) => "disable",
            (SslMode::Prefer, _) => "prefer",
            (_, true) => "verify-full",
            _ => "require",
        };
        let text = |v: Option<&[u8]>| v.map(|v| String::from_utf8_lossy(v).into_owned());
        Ok(serde_json::json!({
            "hosts": host_names(config),
            "ports": config.get_ports(),
            "user": config.get_user(),
            "password": text(config.get_password()),
            "database": config.get_dbname(),
            "options": config.get_options(),
            "application_name": config.get_application_name(),
            "sslmode": sslmode,
        }))
    }

    /// `postgres://user@host:port/dbname`, without the password.
    pub fn target(&self) -> &str {
        &self.target
    }

    pub fn connection_error(&self, cause: impl Display) -> Error {
        Error::Connection(format!(
            "cannot connect to Postgres at {}: {cause}",
            self.target
        ))
    }

    /// A failure to obtain a pooled connection.
    pub fn pool_error(&self, e: PoolError) -> Error {
        match e {
            PoolError::Backend(e) => self.connection_error(driver_cause(&e)),
            PoolError::Closed => Error::Connection("the store was closed".into()),
            other => self.connection_error(other),
        }
    }
}

/// What the DSN leaves out comes from the libpq environment variables, as
/// node-postgres (the reference's driver) does; the host defaults to localhost.
fn fill_from_env(config: &mut Config, env: impl Fn(&str) -> Option<String>) -> Result<()> {
    if config.get_hosts().is_empty() && config.get_hostaddrs().is_empty() {
        let hosts = env("PGHOST").unwrap_or_else(|| "localhost".into());
        for host in hosts.split(',') {
            config.host(host.trim());
        }
    }
    if config.get_ports().is_empty() {
        if let Some(port) = env("PGPORT") {
            let port = port
                .trim()
                .parse()
                .map_err(|_| Error::Connection(format!("PGPORT is not a port number: {port}")))?;
            config.port(port);
        }
    }
    if config.get_user().is_none() {
        if let Some(user) = env("PGUSER") {
            config.user(user);
        }
    }
    if config.get_password().is_none() {
        if let Some(password) = env("PGPASSWORD") {
            config.password(password);
        }
    }
    if config.get_dbname().is_none() {
        if let Some(dbname) = env("PGDATABASE") {
            config.dbname(dbname);
        }
    }
    Ok(())
}

/// The hosts (a socket directory as its path), else the host addresses.
fn host_names(config: &Config) -> Vec<String> {
    if config.get_hosts().is_empty() {
        return config
            .get_hostaddrs()
            .iter()
            .map(|a| a.to_string())
            .collect();
    }
    config
        .get_hosts()
        .iter()
        .map(|host| match host {
            Host::Tcp(name) => name.clone(),
            // tokio-postgres has socket hosts only on unix.
            #[cfg(unix)]
            Host::Unix(path) => path.display().to_string(),
        })
        .collect()
}

/// `postgres://user@host:port/dbname`, without the password.
fn describe(config: &Config) -> String {
    let names = host_names(config);
    let hosts: Vec<String> = names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let port = config
                .get_ports()
                .get(i)
                .or_else(|| config.get_ports().first())
                .copied()
                .unwrap_or(5432);
            format!("{name}:{port}")
        })
        .collect();
    let user = config
        .get_user()
        .map(|u| format!("{u}@"))
        .unwrap_or_default();
    let dbname = config.get_dbname().unwrap_or("");
    format!("postgres://{user}{}/{dbname}", hosts.join(","))
}

fn invalid(what: impl Display) -> Error {
    Error::Connection(format!("invalid Postgres connection string: {what}"))
}

/// Query parameters handed to the driver as they are (libpq's names and
/// meanings); node-postgres ignores what it does not know, and so do we.
const PASSED_ON: [&str; 7] = [
    "connect_timeout",
    "keepalives",
    "keepalives_idle",
    "target_session_attrs",
    "tcp_user_timeout",
    "channel_binding",
    "load_balance_hosts",
];

/// Server settings node-postgres sends at startup, set here through `options`.
const STARTUP_SETTINGS: [&str; 3] = [
    "statement_timeout",
    "lock_timeout",
    "idle_in_transaction_session_timeout",
];

/// Certificate files node-postgres reads; this package checks certificates
/// against the Mozilla root set only.
const CERTIFICATE_FILES: [&str; 4] = ["sslcert", "sslkey", "sslrootcert", "sslcrl"];

/// A URL or socket-directory DSN as a libpq `key=value` list for the
/// driver, with whether the certificate is to be checked; `None` for a DSN
/// that is already a `key=value` list.
fn url_to_conninfo(dsn: &str) -> Result<Option<(String, bool)>> {
    if dsn.starts_with('/') {
        // A socket directory, then (after a space) the database.
        let mut parts = dsn.split(' ');
        let mut out = Conninfo::default();
        out.push("host", parts.next().unwrap_or_default());
        out.push("dbname", parts.next().unwrap_or_default());
        return Ok(Some((out.0, false)));
    }
    let Some(rest) = ["postgres://", "postgresql://"]
        .iter()
        .find_map(|scheme| dsn.strip_prefix(scheme))
    else {
        return Ok(None);
    };
    let rest = rest.split('#').next().unwrap_or_default();
    let (before_query, query) = rest.split_once('?').unwrap_or((rest, ""));
    let (authority, path) = match before_query.find('/') {
        Some(at) => before_query.split_at(at),
        None => (before_query, ""),
    };
    let (userinfo, hostports) = match authority.rfind('@') {
        Some(at) => (&authority[..at], &authority[at + 1..]),
        None => ("", authority),
    };
    let (user, password) = userinfo.split_once(':').unwrap_or((userinfo, ""));
    let params = query_params(query)?;
    let param = |name: &str| {
        params
            .iter()
            .rev()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
            .filter(|value| !value.is_empty())
    };

    let mut out = Conninfo::default();
    let (hosts, ports) = split_hosts(hostports)?;
    match param("host") {
        Some(host) => out.push("host", host),
        None => out.push("host", &hosts.join(",")),
    }
    match param("port") {
        Some(port) => out.push("port", port),
        None if ports.iter().any(Option::is_some) => {
            let ports: Vec<String> = ports
                .iter()
                .map(|p| p.unwrap_or(5432).to_string())
                .collect();
            out.push("port", &ports.join(","))
        }
        None => {}
    }
    match param("user") {
        Some(user) => out.push("user", user),
        None => out.push("user", &component(user, "user")?),
    }
    match param("password") {
        Some(password) => out.push("password", password),
        None => out.push("password", &component(password, "password")?),
    }
    out.push("dbname", &uri(path.strip_prefix('/').unwrap_or(path))?);
    if let Some(name) = param("application_name").or(param("fallback_application_name")) {
        out.push("application_name", name);
    }
    let mut options = param("options").unwrap_or_default().to_string();
    for setting in STARTUP_SETTINGS {
        if let Some(value) = param(setting) {
            options = format!("{options} -c {setting}={}", value.replace(' ', "\\ "));
        }
    }
    out.push("options", options.trim_start());
    for name in PASSED_ON {
        if let Some(value) = param(name) {
            out.push(name, value);
        }
    }
    if let Some(file) = CERTIFICATE_FILES.iter().find(|name| param(name).is_some()) {
        return Err(invalid(format!(
            "{file} is not supported: certificates are checked against the Mozilla root set (sslmode=verify-full)"
        )));
    }
    let (sslmode, verify) = tls_mode(param("sslmode"), param("ssl"))?;
    out.push("sslmode", sslmode);
    Ok(Some((out.0, verify)))
}

/// `sslmode` and `ssl` as node-postgres reads them, in libpq's terms:
/// `sslmode` wins; `ssl=true`/`1` is TLS with the certificate checked,
/// `ssl=0` none; `no-verify` (either) is TLS without the check. `prefer`, `require`
/// and `verify-ca` keep libpq's meanings (docs/api.md, "Differences of a
/// native worker").
fn tls_mode(sslmode: Option<&str>, ssl: Option<&str>) -> Result<(&'static str, bool)> {
    Ok(match (sslmode, ssl) {
        (Some("disable"), _) => ("disable", false),
        (Some("allow" | "prefer"), _) => ("prefer", false),
        (Some("require" | "no-verify"), _) => ("require", false),
        (Some("verify-ca" | "verify-full"), _) => ("require", true),
        (Some(other), _) => {
            return Err(invalid(format!(
                "sslmode must be one of disable, prefer, require, verify-ca, verify-full, no-verify, got {other:?}"
            )))
        }
        (None, Some("true" | "1")) => ("require", true),
        (None, Some("no-verify")) => ("require", false),
        (None, Some("0")) => ("disable", false),
        (None, _) => ("prefer", false),
    })
}

/// The hosts of a URL's authority and each one's port, if given.
fn split_hosts(hostports: &str) -> Result<(Vec<String>, Vec<Option<u16>>)> {
    let mut hosts = Vec::new();
    let mut ports = Vec::new();
    for hostport in hostports.split(',').filter(|h| !h.is_empty()) {
        let (host, port) = match hostport.strip_prefix('[') {
            Some(bracketed) => {
                let (host, after) = bracketed
                    .split_once(']')
                    .ok_or_else(|| invalid("an IPv6 host lacks its closing ]"))?;
                (host, after.strip_prefix(':'))
            }
            None => match hostport.rsplit_once(':') {
                Some((host, port)) => (host, Some(port)),
                None => (hostport, None),
            },
        };
        let port = match port.filter(|p| !p.is_empty()) {
            Some(port) => Some(port.parse::<u16>().map_err(|_| invalid("invalid port"))?),
            None => None,
        };
        hosts.push(component(host, "host")?);
        ports.push(port);
    }
    Ok((hosts, ports))
}

/// `application/x-www-form-urlencoded`, as `URLSearchParams` reads it.
fn query_params(query: &str) -> Result<Vec<(String, String)>> {
    query
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            let form = |s: &str| {
                percent_decode_str(&s.replace('+', " "))
                    .decode_utf8()
                    .map(|s| s.into_owned())
                    .map_err(|_| invalid("a query parameter is not UTF-8 once decoded"))
            };
            Ok((form(key)?, form(value)?))
        })
        .collect()
}

/// `decodeURIComponent`: every escape decoded.
fn component(raw: &str, what: &str) -> Result<String> {
    percent_decode_str(raw)
        .decode_utf8()
        .map(|s| s.into_owned())
        .map_err(|_| invalid(format!("the {what} is not UTF-8 once decoded")))
}

/// `decodeURI`: escapes of the URI's reserved characters are kept as written.
fn uri(raw: &str) -> Result<String> {
    const RESERVED: &[u8] = b"#$&+,/:;=?@";
    let bytes = raw.as_bytes();
    let mut out = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < bytes.len() {
        let escape = raw
            .get(i + 1..i + 3)
            .filter(|hex| hex.bytes().all(|b| b.is_ascii_hexdigit()))
            .and_then(|hex| u8::from_str_radix(hex, 16).ok());
        match escape {
            Some(byte) if bytes[i] == b'%' && !RESERVED.contains(&byte) => {
                out.push(byte);
                i += 3;
            }
            _ => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    String::from_utf8(out).map_err(|_| invalid("the database is not UTF-8 once decoded"))
}

/// A libpq `key=value` list; every value single-quoted (backslash escapes
/// inside), empty values left out.
#[derive(Default)]
struct Conninfo(String);

impl Conninfo {
    fn push(&mut self, key: &str, value: &str) {
        if value.is_empty() {
            return;
        }
        let quoted = value.replace('\\', "\\\\").replace('\'', "\\'");
        if !self.0.is_empty() {
            self.0.push(' ');
        }
        self.0.push_str(&format!("{key}='{quoted}'"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptions_never_hold_the_password() {
        for dsn in [
            "postgres://alice:s3cret@db.example:6543/app",
            "host=db.example port=6543 user=alice password='s3cret' dbname=app",
        ] {
            let parsed = Dsn::parse(dsn).unwrap();
            assert_eq!(parsed.target, "postgres://alice@db.example:6543/app");
            let message = parsed.connection_error("refused").to_string();
            assert!(!message.contains("s3cret"), "{message}");
        }
    }

    #[test]
    fn the_environment_fills_what_the_dsn_leaves_out() {
        let env = |name: &str| match name {
            "PGHOST" => Some("db1,db2".to_string()),
            "PGPORT" => Some("6000".to_string()),
            "PGUSER" => Some("envuser".to_string()),
            "PGPASSWORD" => Some("envpass".to_string()),
            "PGDATABASE" => Some("envdb".to_string()),
            _ => None,
        };
        let mut config = Config::from_str("postgres:///app").unwrap();
        fill_from_env(&mut config, env).unwrap();
        assert_eq!(
            describe(&config),
            "postgres://envuser@db1:6000,db2:6000/app"
        );
        assert_eq!(config.get_password(), Some(&b"envpass"[..]));

        let mut explicit = Config::from_str("postgres://me:pw@here:7000/mine").unwrap();
        fill_from_env(&mut explicit, env).unwrap();
        assert_eq!(describe(&explicit), "postgres://me@here:7000/mine");
        assert_eq!(explicit.get_password(), Some(&b"pw"[..]));

        let mut bare = Config::from_str("postgres://").unwrap();
        fill_from_env(&mut bare, |_| None).unwrap();
        assert_eq!(describe(&bare), "postgres://localhost:5432/");
    }

    #[test]
    fn bad_connection_strings_are_not_echoed() {
        let Err(err) = Dsn::parse("postgres://alice:s3cret@db.example:notaport/app") else {
            panic!("a bad port must be refused");
        };
        assert!(matches!(err, Error::Connection(_)));
        assert!(!err.to_string().contains("s3cret"), "{err}");
    }

    #[test]
    fn urls_decode_as_node_postgres_does() {
        let fields = Dsn::fields(
            "postgres://us%40er:p%40ss%2Fw%3Ard@db.example:6000/my%2Fdb?options=-c+search_path%3Dfoo&application_name=a+b&sslmode=no-verify",
        )
        .unwrap();
        assert_eq!(fields["user"], "us@er");
        assert_eq!(fields["password"], "p@ss/w:rd");
        assert_eq!(fields["database"], "my%2Fdb");
        assert_eq!(fields["options"], "-c search_path=foo");
        assert_eq!(fields["application_name"], "a b");
        assert_eq!(fields["sslmode"], "require");
        assert_eq!(fields["hosts"], serde_json::json!(["db.example"]));
        assert_eq!(fields["ports"], serde_json::json!([6000]));
        let socket = Dsn::fields("postgres://me@/app?host=/run/postgresql&ssl=true").unwrap();
        assert_eq!(socket["hosts"], serde_json::json!(["/run/postgresql"]));
        assert_eq!(socket["sslmode"], "verify-full");
    }
}
