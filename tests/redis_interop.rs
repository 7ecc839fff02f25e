//! A Perl writer and a Rust service sharing a real Redis, as our users run
//! them: `examples/redis_cache.pl write` SETs a session (blessed objects, a
//! team hash shared by two users with a weak reference back to its owner,
//! UTF-8 and byte strings, zstd); the Rust side GETs it, reads it with serde
//! into structs and as a `Value`, changes the shared team and the visit
//! count, and SETs it back zstd-compressed; `examples/redis_cache.pl read`
//! GETs the update and prints it, which is compared line for line.
//!
//! The test starts its own `redis-server` (Debian's `redis-server` package)
//! on a free loopback port, with no persistence, and kills it at the end,
//! also when an assertion fails. Where the server cannot start, or Perl's
//! `Redis` (`libredis-perl`) or Sereal (`libsereal-perl`) is missing, it
//! prints `notice: ... skipped: ...` to stderr and passes.
//! `SEREAL_REDIS_SERVER` names the server program (default `redis-server`
//! on the `PATH`).

use redis::Commands;
use serde::Deserialize;
use sereal::{Compression, Decoder, Encoder, EncoderOptions, Header, Ref, Value};
use std::io::{Read, Write};
use std::net::TcpListener;
use std::process::{Child, Command, Stdio};

mod common;

const KEY: &str = "session:42";
const PERL_SIDE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/redis_cache.pl");
const PNG: &[u8] = b"\x89PNG\r\n\x1a\n";
const JPEG: &[u8] = b"\xff\xd8\xff\xe0";

/// A `redis-server` child process, killed and reaped when dropped.
struct Server {
    child: Child,
    port: u16,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    /// Starts `redis-server` on a free loopback port and connects to it, or
    /// says why it cannot. A port taken between picking it and the server's
    /// bind makes the server exit: another port is tried.
    fn start() -> Result<(Server, redis::Connection), String> {
        let program =
            std::env::var_os("SEREAL_REDIS_SERVER").unwrap_or_else(|| "redis-server".into());
        let mut why = String::new();
        for _ in 0..5 {
            let port = TcpListener::bind("127.0.0.1:0")
                .and_then(|l| l.local_addr())
                .map_err(|e| format!("no free loopback port: {e}"))?
                .port();
            let child = Command::new(&program)
                .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
                .args(["--save", "", "--appendonly", "no"])
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .map_err(|e| format!("cannot run {}: {e}", program.to_string_lossy()))?;
            let mut server = Server { child, port };
            match server.connect() {
                Ok(con) => return Ok((server, con)),
                Err(e) => why = e,
            }
        }
        Err(why)
    }

    /// Waits (up to 10 s) until this server, and not another process on its
    /// port, answers; an error if it exits first.
    fn connect(&mut self) -> Result<redis::Connection, String> {
        let client = redis::Client::open(format!("redis://127.0.0.1:{}/", self.port))
            .map_err(|e| e.to_string())?;
        let ours = format!("process_id:{}", self.child.id());
        for _ in 0..200 {
            if let Some(status) = self.child.try_wait().map_err(|e| e.to_string())? {
                let mut log = String::new();
                if let Some(mut out) = self.child.stdout.take() {
                    let _ = out.read_to_string(&mut log);
                }
                return Err(match log.lines().last() {
                    Some(last) => format!("redis-server exited ({status}): {last}"),
                    None => format!("redis-server exited ({status})"),
                });
            }
            if let Ok(mut con) = client.get_connection() {
                let info: Result<String, _> = redis::cmd("INFO").arg("server").query(&mut con);
                if info.is_ok_and(|i| i.lines().any(|l| l == ours)) {
                    return Ok(con);
                }
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        Err(format!(
            "redis-server did not answer on port {} in 10 s",
            self.port
        ))
    }
}

/// Whether Perl has the modules the Perl side uses, or which one is missing.
fn perl_modules() -> Result<(), String> {
    for (module, package) in [
        ("Redis", "libredis-perl"),
        ("Sereal::Encoder", "libsereal-perl"),
        ("Sereal::Decoder", "libsereal-perl"),
    ] {
        let found = Command::new("perl")
            .args([&format!("-M{module}"), "-e", "1"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !found {
            return Err(format!(
                "Perl's {module} is not installed (apt-get install {package})"
            ));
        }
    }
    Ok(())
}

/// What `examples/redis_cache.pl MODE` prints against the server on `port`.
fn perl_side(port: u16, mode: &str) -> String {
    let server = format!("127.0.0.1:{port}");
    let out = common::perl(&[PERL_SIDE, mode], &[("REDIS_SERVER", &server)]);
    String::from_utf8(out).expect("the Perl side prints ASCII")
}

#[derive(Deserialize, Debug, PartialEq)]
struct Session {
    id: u32,
    visits: u32,
    recent: Vec<String>,
    users: Vec<User>,
}

#[derive(Deserialize, Debug, PartialEq)]
struct User {
    id: u32,
    name: String,
    avatar: Blob,
    team: Team,
}

#[derive(Deserialize, Debug, PartialEq)]
struct Team {
    name: String,
    plan: String,
    /// The weak reference to the first user: undef (`None`) where that
    /// user is being read, the user where it is not.
    owner: Option<Box<User>>,
}

/// A byte string (Perl's non-UTF-8 string) as bytes.
#[derive(Debug, PartialEq)]
struct Blob(Vec<u8>);

impl<'de> Deserialize<'de> for Blob {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Blob, D::Error> {
        struct Bytes;
        impl serde::de::Visitor<'_> for Bytes {
            type Value = Blob;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a byte string")
            }
            fn visit_bytes<E>(self, v: &[u8]) -> Result<Blob, E> {
                Ok(Blob(v.to_vec()))
            }
        }
        d.deserialize_bytes(Bytes)
    }
}

/// The session's recently viewed pages, as Perl writes them.
fn recent() -> Vec<String> {
    (1..=25)
        .map(|i| format!("/catalog/item/{i}?ref=home&utm_source=newsletter"))
        .collect()
}

/// The session Perl writes, as the graph it is, with the team's `plan` and
/// the `visits` count given.
fn session_graph(plan: &str, visits: i64) -> Value {
    let team = Ref::hash(
        [("name", Value::from("Zoë's crew")), ("plan", plan.into())]
            .into_iter()
            .collect(),
    );
    let user = |id: i64, name: &str, avatar: &[u8]| {
        Ref::hash(
            [
                ("id", Value::from(id)),
                ("name", name.into()),
                ("avatar", Value::bytes(avatar)),
                ("team", Value::from(&team)),
            ]
            .into_iter()
            .collect(),
        )
        .blessed("App::User")
    };
    let users = [user(1, "Zoë", PNG), user(2, "Ann", JPEG)];
    team.hash_mut()
        .unwrap()
        .insert("owner", Value::weak(&users[0]));
    Value::Ref(
        Ref::hash(
            [
                ("id", Value::from(42)),
                ("visits", visits.into()),
                ("users", Value::array(users.iter().map(Value::from))),
                ("recent", Value::array(recent())),
            ]
            .into_iter()
            .collect(),
        )
        .blessed("App::Session"),
    )
}

/// What `examples/redis_cache.pl read` prints for the session with the
/// team's `plan` and `visits` given, stored in `len` bytes.
fn perl_dump(plan: &str, visits: u32, len: usize) -> String {
    let mut dump = format!(
        "perl: GET session:42, {len} bytes, zstd\n\
         users share one team: yes\n\
         team owner is user 1, weakly: yes\n\
         $session = #1 App::Session HASH\n\
         $session->{{id}} = int 42\n\
         $session->{{recent}} = #2 ARRAY\n"
    );
    for (i, page) in recent().iter().enumerate() {
        dump += &format!("$session->{{recent}}[{i}] = bytes \"{page}\"\n");
    }
    dump += &format!(
        r#"$session->{{users}} = #3 ARRAY
$session->{{users}}[0] = #4 App::User HASH
$session->{{users}}[0]{{avatar}} = bytes "\x89PNG\x0d\x0a\x1a\x0a"
$session->{{users}}[0]{{id}} = int 1
$session->{{users}}[0]{{name}} = utf8 "Zo\x{{eb}}"
$session->{{users}}[0]{{team}} = #5 HASH
$session->{{users}}[0]{{team}}{{name}} = utf8 "Zo\x{{eb}}'s crew"
$session->{{users}}[0]{{team}}{{owner}} = weak ref to #4
$session->{{users}}[0]{{team}}{{plan}} = bytes "{plan}"
$session->{{users}}[1] = #6 App::User HASH
$session->{{users}}[1]{{avatar}} = bytes "\xff\xd8\xff\xe0"
$session->{{users}}[1]{{id}} = int 2
$session->{{users}}[1]{{name}} = bytes "Ann"
$session->{{users}}[1]{{team}} = ref to #5
$session->{{visits}} = int {visits}
"#
    );
    dump
}

/// The body of a document, decompressed.
fn body(doc: &[u8]) -> Vec<u8> {
    let header = Header::parse(doc).unwrap();
    Decoder::default()
        .body_bytes(doc, &header)
        .unwrap()
        .0
        .into_owned()
}

/// Says on stderr why the test does not run: written to the stream itself,
/// as `eprintln!` output is captured (and not shown) for a passing test.
fn skip(why: &str) {
    let _ = writeln!(std::io::stderr(), "notice: redis_interop skipped: {why}");
}

#[test]
fn perl_and_rust_share_a_session_in_redis() {
    if let Err(why) = perl_modules() {
        return skip(&why);
    }
    let (server, mut con) = match Server::start() {
        Ok(started) => started,
        Err(why) => return skip(&format!("redis-server cannot start: {why}")),
    };

    // Perl writes the session.
    let wrote = perl_side(server.port, "write");
    let blob: Vec<u8> = con
        .get::<_, Option<Vec<u8>>>(KEY)
        .unwrap()
        .expect("Perl SET the session");
    assert_eq!(
        wrote,
        format!("perl: SET session:42, {} bytes\n", blob.len())
    );
    let header = Header::parse(&blob).unwrap();
    assert_eq!((header.version, header.compression), (5, Compression::Zstd));
    assert_eq!(
        perl_side(server.port, "read"),
        perl_dump("pro", 3, blob.len())
    );

    // serde: a tree of structs, each user with its own copy of the team.
    // The weak `owner` reads as `None` under the first user (that user is
    // being read) and as the first user under the second.
    let team = |owner| Team {
        name: "Zoë's crew".into(),
        plan: "pro".into(),
        owner,
    };
    let first = |owner| User {
        id: 1,
        name: "Zoë".into(),
        avatar: Blob(PNG.to_vec()),
        team: team(owner),
    };
    let session: Session = sereal::from_slice(&blob).unwrap();
    assert_eq!(
        session,
        Session {
            id: 42,
            visits: 3,
            recent: recent(),
            users: vec![
                first(None),
                User {
                    id: 2,
                    name: "Ann".into(),
                    avatar: Blob(JPEG.to_vec()),
                    team: team(Some(Box::new(first(None)))),
                },
            ],
        }
    );

    // Value: the graph, with classes, string kinds, one shared team node
    // and the weak link to its owner.
    let doc = sereal::decode(&blob).unwrap();
    assert_eq!(*doc, session_graph("pro", 3));

    // Written back unchanged with Perl's options, the body is Perl's byte
    // for byte (the zstd frames may differ with the zstd version). This
    // comes before the handles below are taken: a handle raises a node's
    // strong count, and then, as Perl's encoder does for a hash with one
    // more reference, the encoder writes `REFN HASH` for `HASHREF_n`.
    let mut enc = Encoder::new(EncoderOptions::new().compress(Compression::Zstd)).unwrap();
    assert_eq!(body(&enc.encode(&doc).unwrap()), body(&blob));

    // The Rust service moves the shared team to another plan, through the
    // first user, and counts a visit.
    {
        let users = doc.get("users").unwrap();
        let (user0, user1) = (users.at(0).unwrap(), users.at(1).unwrap());
        let team0 = user0.get("team").unwrap().node().unwrap();
        assert!(Ref::ptr_eq(
            &team0,
            &user1.get("team").unwrap().node().unwrap()
        ));
        match team0.as_hash().unwrap().get("owner") {
            Some(Value::Weak(owner)) => {
                assert!(Ref::ptr_eq(
                    &owner.upgrade().unwrap(),
                    user0.as_strong_ref().unwrap()
                ))
            }
            other => panic!("the owner is not a weak reference: {other:?}"),
        }
        team0.hash_mut().unwrap().insert("plan", "enterprise");
        let visits = doc.get("visits").and_then(|v| v.as_i64()).unwrap();
        let root = doc.node().unwrap();
        root.hash_mut().unwrap().insert("visits", visits + 1);
    }
    assert_eq!(*doc, session_graph("enterprise", 4));
    let update = enc.encode(&doc).unwrap();
    assert_eq!(
        Header::parse(&update).unwrap().compression,
        Compression::Zstd
    );
    con.set::<_, _, ()>(KEY, &update).unwrap();

    // Perl reads the update: the new plan under both users (one team hash,
    // by refaddr), the owner still weak, every other value as Perl wrote it.
    assert_eq!(
        perl_side(server.port, "read"),
        perl_dump("enterprise", 4, update.len())
    );
    drop(server);
}
