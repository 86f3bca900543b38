"""Fetches the Kafka broker psbench starts for the kafka driver (README.md, "The broker:
jars from Maven Central"): Maven copies the jars of pom.xml (and tools-pom.xml: the
console consumer psbench criteria runs) into $HOME/.cache/psbench/kafka/VERSION, outside
the checkout, and the launchers kafka-java and kafka-console-consumer are written beside
them; one training start of the broker leaves kafka.jsa, a class-data-sharing archive every
later JVM maps (a faster start). Once the folder is complete (its file `complete`), a
later call only rewrites the launchers and the log configurations: no Maven, no network.
The build runs it once (CMake target kafka-broker). Usage: fetch_broker.py [CACHE_DIR]"""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEPENDENCY_PLUGIN = "org.apache.maven.plugins:maven-dependency-plugin:3.6.1"
MVN_TIMEOUT_S = 900


def pom_property(name: str) -> str:
    found = re.search(rf"<{re.escape(name)}>([^<]+)</{re.escape(name)}>",
                      (HERE / "pom.xml").read_text())  # fmt: skip
    if not found:
        sys.exit(f"{HERE / 'pom.xml'}: no <{name}>")
    return found.group(1).strip()


def copy_jars(libs: Path, pom: str = "pom.xml", main_jar: str = "kafka_2.13-*.jar") -> None:
    """mvn copies the pom's artifacts (kafka_2.13; tools-pom.xml: kafka-tools) and their
    runtime dependencies into libs (made anew), at pom.xml's versions."""
    partial = libs.with_name(libs.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    mvn = shutil.which("mvn")
    if mvn is None:
        sys.exit("kafka: mvn is not installed (Debian package maven; make setup installs it)")
    versions = [f"-D{name}={pom_property(name)}" for name in ("kafka.version", "log4j.version")]
    argv = [mvn, "-B", "-q", "-f", str(HERE / pom), f"{DEPENDENCY_PLUGIN}:copy-dependencies",
            "-Dstyle.color=never", "-DincludeScope=runtime", f"-DoutputDirectory={partial}",
            *versions]  # fmt: skip
    done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=MVN_TIMEOUT_S)  # fmt: skip
    if done.returncode != 0 or not any(partial.glob(main_jar)):
        shutil.rmtree(partial, ignore_errors=True)
        said = (done.stdout + done.stderr).strip()[-2000:]
        sys.exit(f"kafka: `{' '.join(argv)}` failed (exit code {done.returncode}):\n{said}")
    shutil.rmtree(libs, ignore_errors=True)
    partial.rename(libs)
    if pom == "pom.xml":
        # An archive is valid only for the jars it was made from (their sizes and times).
        (libs.parent / "kafka.jsa").unlink(missing_ok=True)


def jar_version(libs: Path) -> str:
    """What kafka-clients says it is (its kafka/kafka-version.properties)."""
    [clients] = libs.glob("kafka-clients-*.jar")
    with zipfile.ZipFile(clients) as jar:
        text = jar.read("kafka/kafka-version.properties").decode()
    fields = dict(line.split("=", 1) for line in text.splitlines() if "=" in line)
    return f"Apache Kafka {fields.get('version', '?')} (commit {fields.get('commitId', '?')})"


LAUNCHER = """#!/bin/sh
# Written by {script}: java with the Kafka broker's jars (Maven Central,
# fetched with {pom}), psbench's log configuration and, once made, the class-data-sharing
# archive of a broker's start.
if [ "$1" = "--version" ]; then
  echo '{version}'
  exit 0
fi
if [ -f '{home}/kafka.jsa' ]; then
  set -- -XX:SharedArchiveFile='{home}/kafka.jsa' -Xlog:cds=off -Xlog:cds+dynamic=off "$@"
fi
exec java -Dlog4j2.configurationFile='{home}/log4j2.properties' -cp '{home}/libs/*' "$@"
"""

CONSOLE_CONSUMER = """#!/bin/sh
# Written by {script}: Kafka's console consumer, from kafka-tools' jars (Maven Central,
# fetched with {pom}), with its own log configuration (the partitions it is given).
exec java -Xmx256m -XX:-UsePerfData -XX:TieredStopAtLevel=1 \\
  -Dlog4j2.configurationFile='{home}/tools-log4j2.properties' -cp '{home}/tools/*' \\
  org.apache.kafka.tools.consumer.ConsoleConsumer "$@"
"""

TRAINING_TIMEOUT_S = 180


def make_archive(home: Path) -> None:
    """One start of the broker as psbench starts it for a run (the manifest's service, by
    psbench's own service definitions: its configuration, storage format and JVM options),
    with -XX:ArchiveClassesAtExit; kafka.jsa once it has stopped. Without it (a failure
    here) everything works, only slower to start."""
    sys.path.insert(0, str(HERE.parents[1] / "python"))
    from psbench.run.service_definitions import definition

    partial = home / "kafka.jsa.partial"
    partial.unlink(missing_ok=True)
    with tempfile.TemporaryDirectory(prefix="psbench-kafka-training-") as folder:
        service = definition("kafka", executable=str(home / "kafka-java"))
        launch = service.launch(Path(folder), largest_message=1 << 20)
        formatted = subprocess.run(launch.prepare, capture_output=True, stdin=subprocess.DEVNULL,
                                   timeout=TRAINING_TIMEOUT_S)  # fmt: skip
        if formatted.returncode != 0:
            print(f"kafka: no start archive (format failed: {formatted.stdout[-300:]!r})")
            return
        log = Path(folder) / "broker.log"
        with log.open("w") as out:
            broker = subprocess.Popen(
                [launch.argv[0], f"-XX:ArchiveClassesAtExit={partial}", *launch.argv[1:]],
                stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            )  # fmt: skip
        try:
            end = time.monotonic() + TRAINING_TIMEOUT_S
            while "Kafka Server started" not in log.read_text(errors="replace"):
                if broker.poll() is not None or time.monotonic() > end:
                    print(f"kafka: no start archive (the training broker did not start: {log})")
                    return
                time.sleep(0.2)
        finally:
            broker.terminate()  # the archive is written as the JVM exits
            try:
                broker.wait(timeout=TRAINING_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                broker.kill()
                broker.wait()
    if partial.is_file() and partial.stat().st_size > 0:
        os.replace(partial, home / "kafka.jsa")


def write_script(path: Path, text: str) -> None:
    partial = path.with_name(path.name + ".partial")
    partial.write_text(text)
    partial.chmod(0o755)
    os.replace(partial, path)


def write_launcher(home: Path, version: str) -> None:
    for config in ("log4j2.properties", "tools-log4j2.properties"):
        shutil.copyfile(HERE / config, home / config)
    script = Path(__file__).name
    write_script(home / "kafka-java", LAUNCHER.format(script=script, pom=HERE / "pom.xml",
                                                      version=version, home=home))  # fmt: skip
    write_script(home / "kafka-console-consumer",
                 CONSOLE_CONSUMER.format(script=script, pom=HERE / "tools-pom.xml", home=home))  # fmt: skip


def timed(step, done: str) -> None:
    started = time.monotonic()
    step()
    print(f"kafka: {done} in {time.monotonic() - started:.1f} s")


def main() -> None:
    cache = Path(sys.argv[1]) if len(sys.argv) > 1 else Path.home() / ".cache" / "psbench"
    home = cache / "kafka" / pom_property("kafka.version")
    home.mkdir(parents=True, exist_ok=True)
    complete = home / "complete"
    if not complete.exists():
        timed(lambda: copy_jars(home / "libs"), f"fetched the broker's jars into {home / 'libs'}")
    if not (home / "tools").is_dir():  # copy_jars renames it into place once complete
        timed(lambda: copy_jars(home / "tools", "tools-pom.xml", "kafka-tools-*.jar"),
              f"fetched the console consumer's jars into {home / 'tools'}")  # fmt: skip
    version = jar_version(home / "libs")
    write_launcher(home, version)
    if not (home / "kafka.jsa").exists():
        timed(lambda: make_archive(home), "class-data-sharing archive of a broker start")
    complete.write_text(version + "\n")


if __name__ == "__main__":
    main()
