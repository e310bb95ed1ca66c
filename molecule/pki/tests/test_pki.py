"""Verify the internal pki role through a calling role (molecule/pki).

The tests run in the file's order and re-run converge.yml with other variables: the CA is made once and signs a
second service; two services in one run go through the CA and the host's library once; a certificate is renewed
before it expires and when its names change, with the same key; the user's own pair is installed, and a pair that
does not belong together is refused before anything is written; a play that includes pki directly is refused.
"""
import datetime
import os

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from ansible_collections.gpuops.gpu_server.tests.support.playbook import molecule_playbook

testinfra_hosts = ["docker://gpuops-pki"]
HOST_NAME = "gpuops-pki"
EPHEMERAL = os.environ["MOLECULE_EPHEMERAL_DIRECTORY"]
PROJECT = os.environ["MOLECULE_PROJECT_DIRECTORY"]
SCENARIO_DIR = os.environ.get("MOLECULE_SCENARIO_DIRECTORY", os.path.join(PROJECT, "molecule", "pki"))
CA_DIR = os.path.join(EPHEMERAL, "pki")
PKI = "/etc/gpuops-pki"


def converge(extra=None, play=None):
    """ansible-playbook converge.yml (or PLAY) against the scenario's inventory; (rc, output)."""
    return molecule_playbook(play or os.path.join(SCENARIO_DIR, "converge.yml"), extra_vars=extra, timeout=600,
                             env={"ANSIBLE_ROLES_PATH": os.path.join(SCENARIO_DIR, "roles")})


def certificate(host, name):
    return x509.load_pem_x509_certificate(host.file("%s/%s.crt" % (PKI, name)).content_string.encode())


def sans(cert):
    ext = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    return sorted(["DNS:" + n for n in ext.get_values_for_type(x509.DNSName)]
                  + ["IP:" + str(a) for a in ext.get_values_for_type(x509.IPAddress)])


def public_key_of_key_file(host, name):
    key = serialization.load_pem_private_key(host.file("%s/%s.key" % (PKI, name)).content_string.encode(), None)
    return key.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)


def public_key_of(cert):
    return cert.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)


def ca_files():
    out = {}
    for name in ("ca.crt", "ca.key"):
        with open(os.path.join(CA_DIR, name), "rb") as f:
            out[name] = f.read()
    return out


def own_pair(common_name):
    """A self-signed certificate and its key, as PEM text, as a user might bring them."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=30))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName(common_name)]), critical=False)
            .sign(key, hashes.SHA256()))
    return (cert.public_bytes(serialization.Encoding.PEM).decode(),
            key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                              serialization.NoEncryption()).decode())


def test_key_and_certificate_of_the_service(host):
    key = host.file(PKI + "/demo.key")
    assert (key.user, key.group, key.mode) == ("root", "svc", 0o640)
    crt = host.file(PKI + "/demo.crt")
    assert (crt.user, crt.group, crt.mode) == ("root", "svc", 0o644)
    assert host.file(PKI + "/ca.crt").mode == 0o644
    # openssl on the host accepts the chain, for the names a client would use.
    assert host.run("openssl verify -CAfile %s/ca.crt %s/demo.crt", PKI, PKI).stdout.strip() == PKI + "/demo.crt: OK"
    for name in ("localhost", HOST_NAME):
        assert host.run("openssl verify -CAfile %s/ca.crt -verify_hostname %s %s/demo.crt", PKI, name, PKI).rc == 0, name
    assert host.run("openssl verify -CAfile %s/ca.crt -verify_ip 127.0.0.1 %s/demo.crt", PKI, PKI).rc == 0
    cert = certificate(host, "demo")
    assert sans(cert) == sorted(["DNS:" + HOST_NAME, "DNS:localhost", "IP:127.0.0.1", "IP:::1"])
    assert cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == HOST_NAME
    assert public_key_of(cert) == public_key_of_key_file(host, "demo")
    assert isinstance(cert.public_key(), ec.EllipticCurvePublicKey) and cert.public_key().curve.name == "secp256r1"
    eku = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert list(eku) == [x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]
    days = (cert.not_valid_after_utc - cert.not_valid_before_utc).days
    assert 397 <= days <= 399, days


def test_the_ca_stays_on_the_controller(host):
    assert os.stat(CA_DIR).st_mode & 0o777 == 0o700
    assert os.stat(os.path.join(CA_DIR, "ca.key")).st_mode & 0o777 == 0o600
    assert sorted(os.listdir(CA_DIR)) == ["ca.crt", "ca.key"]  # the service's key never left the host
    with open(os.path.join(CA_DIR, "ca.crt"), "rb") as f:
        ca = x509.load_pem_x509_certificate(f.read())
    assert host.file(PKI + "/ca.crt").content_string.encode() == ca.public_bytes(serialization.Encoding.PEM)
    constraints = ca.extensions.get_extension_for_class(x509.BasicConstraints)
    assert constraints.critical and constraints.value.ca and constraints.value.path_length == 0
    assert not host.file(PKI + "/ca.key").exists


def test_the_ca_is_made_once_and_signs_a_second_service(host):
    before = ca_files()
    rc, out = converge({"pki_caller_name": "second"})
    assert rc == 0, out
    assert "pki_changed=True" in out
    assert ca_files() == before
    assert host.run("openssl verify -CAfile %s/ca.crt %s/second.crt", PKI, PKI).rc == 0
    assert public_key_of(certificate(host, "second")) != public_key_of(certificate(host, "demo"))


def test_two_services_in_one_run_go_through_the_ca_and_the_library_once(host):
    before = ca_files()
    rc, out = converge(play=os.path.join(os.path.dirname(os.path.abspath(__file__)), "two.yml"))
    assert rc == 0, out
    assert ca_files() == before
    for name in ("third", "fourth"):
        assert host.run("openssl verify -CAfile %s/ca.crt %s/%s.crt", PKI, PKI, name).rc == 0, name
    # Each task header appears once per run of the task: the first service's only.
    for task in ("pki : Look for the CA on the control node]", "pki : Self-sign the CA's certificate]",
                 # the library, through common's packages step (its wait task runs on every call of the step)
                 "common : Wait for cloud-init or unattended-upgrades to release the package manager, then read the "
                 "missing packages]",
                 "pki : Find out whether community.crypto can make an ECC key with the host's cryptography]",
                 # the same directory: made, and given the CA's certificate, once
                 "pki : Create the certificate directory]", "pki : Install the CA's certificate]"):
        assert out.count(task) == 1, (task, out)
    assert out.count("pki : Make the certificate request]") == 2, out


def test_renewal_before_expiry_keeps_the_key(host):
    old = certificate(host, "demo")
    key = host.file(PKI + "/demo.key").sha256sum
    # 400 days ahead the certificate (397 days) has expired: it is renewed now, with the same key.
    rc, out = converge({"pki_renew_days": 400})
    assert rc == 0, out
    assert "pki_changed=True" in out
    new = certificate(host, "demo")
    assert new.serial_number != old.serial_number and new.not_valid_after_utc >= old.not_valid_after_utc
    assert host.file(PKI + "/demo.key").sha256sum == key
    assert host.run("openssl verify -CAfile %s/ca.crt %s/demo.crt", PKI, PKI).rc == 0
    # With the default 30 days nothing is due: nothing changes, and the caller is told so.
    rc, out = converge()
    assert rc == 0, out
    assert "pki_changed=False" in out and "changed=0" in out
    assert certificate(host, "demo").serial_number == new.serial_number


def test_new_names_reissue_the_certificate(host):
    old = certificate(host, "demo")
    rc, out = converge({"pki_subject_alt_names": ["DNS:gpu-01.example.com", "IP:10.0.0.5"]})
    assert rc == 0, out
    assert "pki_changed=True" in out
    cert = certificate(host, "demo")
    assert sans(cert) == ["DNS:gpu-01.example.com", "IP:10.0.0.5"] and cert.serial_number != old.serial_number
    rc, out = converge()
    assert rc == 0, out
    assert sans(certificate(host, "demo")) == sorted(["DNS:" + HOST_NAME, "DNS:localhost", "IP:127.0.0.1", "IP:::1"])


def test_a_pair_that_does_not_belong_together_is_refused_before_any_write(host):
    cert_a, _key_a = own_pair("own-a.example.com")
    _cert_b, key_b = own_pair("own-b.example.com")
    rc, out = converge({"pki_caller_name": "own", "pki_own_certificate": cert_a, "pki_own_private_key": key_b})
    assert rc != 0
    assert "own: the certificate given" in out and "does not belong to the private key given" in out, out
    assert "BEGIN PRIVATE KEY" not in out and key_b.splitlines()[1] not in out
    assert not host.file(PKI + "/own.crt").exists and not host.file(PKI + "/own.key").exists


def test_own_pair_is_installed(host):
    cert_a, key_a = own_pair("own-a.example.com")
    ca_before = host.file(PKI + "/ca.crt").sha256sum
    rc, out = converge({"pki_caller_name": "own", "pki_own_certificate": cert_a, "pki_own_private_key": key_a})
    assert rc == 0, out
    assert "pki_changed=True" in out and key_a.splitlines()[1] not in out
    assert host.file(PKI + "/own.crt").content_string == cert_a
    key = host.file(PKI + "/own.key")
    assert key.content_string == key_a and (key.user, key.group, key.mode) == ("root", "svc", 0o640)
    assert host.file(PKI + "/ca.crt").sha256sum == ca_before  # no own CA given: the collection's stays
    rc, out = converge({"pki_caller_name": "own", "pki_own_certificate": cert_a, "pki_own_private_key": key_a})
    assert rc == 0 and "pki_changed=False" in out and "changed=0" in out, out


def test_a_direct_call_is_refused(host):
    rc, out = converge(play=os.path.join(os.path.dirname(os.path.abspath(__file__)), "direct.yml"))
    assert rc != 0 and "gpuops.gpu_server.pki is internal" in out, out
    assert not host.file(PKI + "/direct.key").exists
