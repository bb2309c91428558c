//! The client side of SCRAM-SHA-256 (RFC 5802, RFC 7677; libpq's `fe-auth-scram.c`),
//! with channel binding `tls-server-end-point`, and a per-process cache of salted
//! passwords.
//!
//! Why not postgres-protocol's `ScramSha256`: it derives the salted password (4,096
//! rounds of HMAC-SHA-256 by default, PostgreSQL's `scram_iterations`) at every
//! connection, with no way to hand it one. That derivation is most of a SCRAM
//! connection's client CPU, and under `-C` pgbench-rs connects once per transaction
//! with the same password to a server that keeps the same salt and iteration count
//! per role. So the salted password is derived once per (password, salt, iterations)
//! and kept in memory, never on disk, for the life of the process, with the client
//! and server keys drawn from it.
//!
//! HMAC is composed here from SHA-256 (RFC 2104) rather than taken from OpenSSL's
//! EVP interface: OpenSSL 3.0 looks the algorithm up in its providers at each
//! `EVP_DigestSignInit`, which cost more than the hashing in a `-C` connection.

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use openssl::hash::MessageDigest;
use openssl::sha::Sha256;
use std::sync::Mutex;

/// libpq's `SCRAM_RAW_NONCE_LEN`.
const NONCE_BYTES: usize = 18;
/// PostgreSQL refuses nothing above this, but a malicious server could ask for
/// billions of rounds; libpq has no cap, postgres-protocol caps at this.
const MAX_ITERATIONS: u32 = 100_000_000;

/// The channel binding this exchange uses.
pub(crate) enum Binding {
    /// We cannot bind (no TLS): `n,,`.
    Unsupported,
    /// We could, the server did not offer `-PLUS`: `y,,`.
    Unrequested,
    /// `p=tls-server-end-point,,` with the hash of the server's certificate.
    ServerEndPoint(Vec<u8>),
}

impl Binding {
    fn gs2_header(&self) -> &'static str {
        match self {
            Binding::Unsupported => "n,,",
            Binding::Unrequested => "y,,",
            Binding::ServerEndPoint(_) => "p=tls-server-end-point,,",
        }
    }
}

/// One SCRAM exchange, from the client-first message to the server's signature.
pub(crate) struct Scram {
    password: Vec<u8>,
    binding: Binding,
    nonce: String,
    /// What to send next.
    message: String,
    /// After the server-first message: the keys and the AuthMessage.
    proof_state: Option<(Keys, String)>,
}

/// What a password, salt and iteration count give, independent of the exchange.
#[derive(Clone, Copy)]
struct Keys {
    /// `HMAC(SaltedPassword, "Client Key")`.
    client: [u8; 32],
    /// `H(ClientKey)`.
    stored: [u8; 32],
    /// `HMAC(SaltedPassword, "Server Key")`.
    server: [u8; 32],
}

/// Keys already derived: (password, salt, iterations) -> keys. A handful of entries
/// at most (one per role and server); a list is enough.
type SaltKey = (Vec<u8>, Vec<u8>, u32);
static DERIVED: Mutex<Vec<(SaltKey, Keys)>> = Mutex::new(Vec::new());

impl Scram {
    pub(crate) fn new(password: &str, binding: Binding) -> Result<Scram, String> {
        let mut raw = [0u8; NONCE_BYTES];
        openssl::rand::rand_bytes(&mut raw).map_err(|_| "could not generate nonce")?;
        let nonce = STANDARD.encode(raw);
        let message = format!("{}n=,r={nonce}", binding.gs2_header());
        Ok(Scram {
            password: normalize(password),
            binding,
            nonce,
            message,
            proof_state: None,
        })
    }

    /// The message to send now.
    pub(crate) fn message(&self) -> &[u8] {
        self.message.as_bytes()
    }

    /// Takes the server-first message; the next message is the client-final one.
    pub(crate) fn update(&mut self, server_first: &[u8]) -> Result<(), String> {
        let text = std::str::from_utf8(server_first).map_err(|_| "invalid UTF-8")?;
        let mut fields = text.split(',');
        let nonce = attribute(fields.next(), 'r')?;
        let salt = attribute(fields.next(), 's')?;
        let iterations = attribute(fields.next(), 'i')?;
        if !nonce.starts_with(&self.nonce) || nonce.len() == self.nonce.len() {
            return Err("invalid nonce".into());
        }
        let salt = STANDARD.decode(salt).map_err(|_| "invalid salt")?;
        let iterations: u32 = iterations.parse().map_err(|_| "invalid iteration count")?;
        if iterations == 0 || iterations > MAX_ITERATIONS {
            return Err("invalid iteration count".into());
        }
        let keys = keys(&self.password, &salt, iterations)?;
        let mut cbind = self.binding.gs2_header().as_bytes().to_vec();
        if let Binding::ServerEndPoint(hash) = &self.binding {
            cbind.extend_from_slice(hash);
        }
        let without_proof = format!("c={},r={nonce}", STANDARD.encode(cbind));
        let auth_message = format!("n=,r={},{text},{without_proof}", self.nonce);
        let signature = hmac(&keys.stored, auth_message.as_bytes());
        let proof: Vec<u8> = keys
            .client
            .iter()
            .zip(signature)
            .map(|(k, s)| k ^ s)
            .collect();
        self.message = format!("{without_proof},p={}", STANDARD.encode(proof));
        self.proof_state = Some((keys, auth_message));
        Ok(())
    }

    /// Checks the server-final message: the server knew the password too.
    pub(crate) fn finish(&mut self, server_final: &[u8]) -> Result<(), String> {
        let (keys, auth_message) = self.proof_state.take().ok_or("unexpected message")?;
        let text = std::str::from_utf8(server_final).map_err(|_| "invalid UTF-8")?;
        if let Some(error) = text.strip_prefix("e=") {
            return Err(format!(
                "error received from server in SCRAM exchange: {error}"
            ));
        }
        let verifier = attribute(text.split(',').next(), 'v')?;
        let verifier = STANDARD
            .decode(verifier)
            .map_err(|_| "invalid server signature")?;
        let expected = hmac(&keys.server, auth_message.as_bytes());
        if verifier.len() == expected.len() && openssl::memcmp::eq(&verifier, &expected) {
            Ok(())
        } else {
            Err("incorrect server signature".into())
        }
    }
}

/// `x=value` of a SCRAM message, the attribute letter checked.
fn attribute(field: Option<&str>, letter: char) -> Result<&str, String> {
    field
        .and_then(|f| f.strip_prefix(letter))
        .and_then(|f| f.strip_prefix('='))
        .ok_or_else(|| format!("expected attribute \"{letter}\""))
}

/// SASLprep, as libpq applies it: a password it cannot prepare is used as it is.
fn normalize(password: &str) -> Vec<u8> {
    match stringprep::saslprep(password) {
        Ok(p) => p.into_owned().into_bytes(),
        Err(_) => password.as_bytes().to_vec(),
    }
}

/// The keys of `Hi(password, salt, iterations)`, derived once per process for each.
fn keys(password: &[u8], salt: &[u8], iterations: u32) -> Result<Keys, String> {
    let key = (password.to_vec(), salt.to_vec(), iterations);
    let cached = |list: &Vec<(SaltKey, Keys)>| list.iter().find(|(k, _)| *k == key).map(|e| e.1);
    if let Some(v) = cached(&DERIVED.lock().unwrap_or_else(|e| e.into_inner())) {
        return Ok(v);
    }
    let salted = salted_password(password, salt, iterations)?;
    let client = hmac(&salted, b"Client Key");
    let keys = Keys {
        client,
        stored: openssl::sha::sha256(&client),
        server: hmac(&salted, b"Server Key"),
    };
    let mut list = DERIVED.lock().unwrap_or_else(|e| e.into_inner());
    if cached(&list).is_none() {
        list.push((key, keys));
    }
    Ok(keys)
}

/// `Hi(password, salt, iterations)`: PBKDF2 with HMAC-SHA-256.
fn salted_password(password: &[u8], salt: &[u8], iterations: u32) -> Result<[u8; 32], String> {
    let mut out = [0u8; 32];
    openssl::pkcs5::pbkdf2_hmac(
        password,
        salt,
        iterations as usize,
        MessageDigest::sha256(),
        &mut out,
    )
    .map_err(|e| e.to_string())?;
    Ok(out)
}

/// HMAC-SHA-256 (RFC 2104): `H((K ^ opad) || H((K ^ ipad) || data))`, a key longer
/// than the 64-byte block hashed first.
fn hmac(key: &[u8], data: &[u8]) -> [u8; 32] {
    const BLOCK: usize = 64;
    let mut block = [0u8; BLOCK];
    if key.len() > BLOCK {
        block[..32].copy_from_slice(&openssl::sha::sha256(key));
    } else {
        block[..key.len()].copy_from_slice(key);
    }
    let padded = |pad: u8| block.map(|b| b ^ pad);
    let mut inner = Sha256::new();
    inner.update(&padded(0x36));
    inner.update(data);
    let mut outer = Sha256::new();
    outer.update(&padded(0x5c));
    outer.update(&inner.finish());
    outer.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 7677's example exchange (user "user", password "pencil"), with its nonce.
    #[test]
    fn the_rfc_7677_salt_gives_its_salted_password_and_a_client_final_message() {
        let mut s = Scram::new("pencil", Binding::Unsupported).unwrap();
        s.nonce = "rOprNGfwEbeRWgbNEkqO".into();
        s.update(
            b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,\
              s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096",
        )
        .unwrap();
        // The RFC's client sends n=user; PostgreSQL's clients send n= (the server uses
        // the startup user), so the proof differs from the RFC's: check it against an
        // independent computation instead.
        let msg = String::from_utf8(s.message().to_vec()).unwrap();
        assert!(msg.starts_with("c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p="));
        assert_eq!(
            STANDARD.encode(
                salted_password(
                    b"pencil",
                    &STANDARD.decode("W22ZaJ0SNY7soEsUEjb6gQ==").unwrap(),
                    4096
                )
                .unwrap()
            ),
            "xKSVEDI6tPlSysH6mUQZOeeOp01r6B3fcJbodRPcYV0="
        );
    }

    /// RFC 4231's test cases 1, 2 and 6 (a key longer than the block).
    #[test]
    fn hmac_gives_the_rfc_4231_values() {
        let hex = |b: [u8; 32]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
        assert_eq!(
            hex(hmac(&[0x0b; 20], b"Hi There")),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"
        );
        assert_eq!(
            hex(hmac(b"Jefe", b"what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        assert_eq!(
            hex(hmac(
                &[0xaa; 131],
                b"Test Using Larger Than Block-Size Key - Hash Key First"
            )),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
        );
    }

    #[test]
    fn a_nonce_the_server_did_not_extend_or_a_wrong_signature_is_refused() {
        let mut s = Scram::new("pw", Binding::Unrequested).unwrap();
        let own = s.nonce.clone();
        assert!(s
            .update(format!("r={own},s=QUJD,i=4096").as_bytes())
            .is_err());
        let mut s = Scram::new("pw", Binding::Unrequested).unwrap();
        let first = format!("r={}xyz,s=QUJD,i=4096", s.nonce);
        s.update(first.as_bytes()).unwrap();
        assert_eq!(
            s.finish(b"v=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=")
                .unwrap_err(),
            "incorrect server signature"
        );
    }
}
