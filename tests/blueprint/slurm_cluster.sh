#!/usr/bin/env bash
# An ephemeral single-node Slurm 22.05 cluster (munge, MariaDB, slurmdbd,
# slurmctld, slurmd) under $D, all on 127.0.0.1, no systemd.
#
#   D=/tmp/x slurm_cluster.sh start   # prints "export SLURM_CONF=..." on success
#   D=/tmp/x slurm_cluster.sh stop    # stops every daemon by its PID
#
# Ports: $SLURM_TEST_PORT (default 6817) .. +2 for slurmctld/slurmd/slurmdbd,
# $SLURM_TEST_DB_PORT (default 3307) for MariaDB.
set -euo pipefail
cmd=${1:?start or stop}
D=${D:?set D to a fresh directory}
P=${SLURM_TEST_PORT:-6817}
DBP=${SLURM_TEST_DB_PORT:-3307}

stop() {
  for f in slurmd.pid slurmctld.pid slurmdbd.pid mariadbd.pid munge/munged.pid; do
    [ -s "$D/$f" ] || continue
    p=$(cat "$D/$f")
    kill -0 "$p" 2>/dev/null || continue
    kill "$p"
    for _ in $(seq 1 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$p" 2>/dev/null && kill -9 "$p"
  done
  return 0
}

wait_for() {  # wait_for SECONDS COMMAND...
  local n=$(( $1 * 5 )); shift
  for _ in $(seq 1 "$n"); do "$@" >/dev/null 2>&1 && return 0; sleep 0.2; done
  echo "slurm_cluster: timed out waiting for: $*" >&2
  return 1
}

if [ "$cmd" = stop ]; then stop; exit 0; fi
[ "$cmd" = start ] || { echo "usage: slurm_cluster.sh start|stop" >&2; exit 2; }

mkdir -p "$D"/{state,spool,munge,mysql,log,dev}
chmod 700 "$D/munge"
HOST=$(hostname -s)
CPUS=$(nproc)

mungekey -c -k "$D/munge/munge.key"
munged -f --key-file="$D/munge/munge.key" --socket="$D/munge/munge.sock" --pid-file="$D/munge/munged.pid" \
  --log-file="$D/log/munged.log" --seed-file="$D/munge/munged.seed" --num-threads=4

mariadb-install-db --no-defaults --datadir="$D/mysql" --user=root --auth-root-authentication-method=normal \
  --skip-test-db >"$D/log/mariadb-install.log" 2>&1
mariadbd --no-defaults --datadir="$D/mysql" --user=root --bind-address=127.0.0.1 --port="$DBP" \
  --socket="$D/mysql/mysql.sock" --pid-file="$D/mariadbd.pid" --log-error="$D/log/mariadb.log" \
  --skip-name-resolve --innodb-buffer-pool-size=64M --innodb-log-file-size=48M --innodb-lock-wait-timeout=900 \
  >/dev/null 2>&1 &
wait_for 30 mariadb-admin --no-defaults -S "$D/mysql/mysql.sock" -uroot ping
mariadb --no-defaults -S "$D/mysql/mysql.sock" -uroot -e "
  CREATE USER 'slurm'@'127.0.0.1' IDENTIFIED BY 'slurmpw';
  GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';"

cat > "$D/slurm.conf" <<CONF
ClusterName=testcluster
SlurmctldHost=${HOST}(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$P
SlurmdPort=$((P + 1))
AuthType=auth/munge
AuthInfo=socket=$D/munge/munge.sock
CredType=cred/munge
StateSaveLocation=$D/state
SlurmdSpoolDir=$D/spool
SlurmctldPidFile=$D/slurmctld.pid
SlurmdPidFile=$D/slurmd.pid
SlurmctldLogFile=$D/log/slurmctld.log
SlurmdLogFile=$D/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
ReturnToService=2
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=100
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=task=1
GresTypes=gpu
AccountingStorageTRES=gres/gpu
SlurmdTimeout=30
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=127.0.0.1
AccountingStoragePort=$((P + 2))
AccountingStoragePass=$D/munge/munge.sock
MinJobAge=300
NodeName=node1 NodeHostname=${HOST} NodeAddr=127.0.0.1 CPUs=${CPUS} RealMemory=1000 Gres=gpu:4 State=UNKNOWN
PartitionName=debug Nodes=node1 Default=YES MaxTime=INFINITE State=UP
CONF
cat > "$D/slurmdbd.conf" <<CONF
AuthType=auth/munge
AuthInfo=socket=$D/munge/munge.sock
DbdHost=localhost
DbdAddr=127.0.0.1
DbdPort=$((P + 2))
SlurmUser=root
PidFile=$D/slurmdbd.pid
LogFile=$D/log/slurmdbd.log
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$DBP
StorageUser=slurm
StoragePass=slurmpw
StorageLoc=slurm_acct_db
CONF
chmod 600 "$D/slurmdbd.conf"
touch "$D"/dev/nvidia{0,1,2,3}
echo "NodeName=node1 Name=gpu File=$D/dev/nvidia[0-3]" > "$D/gres.conf"
export SLURM_CONF="$D/slurm.conf"

slurmdbd
wait_for 30 bash -c "[ -s '$D/slurmdbd.pid' ] && (echo > /dev/tcp/127.0.0.1/$((P + 2)))"
sacctmgr -i add cluster testcluster >/dev/null
slurmctld -i
wait_for 30 bash -c "scontrol ping | grep -q UP"
slurmd -N node1
wait_for 30 bash -c "sinfo -h -o %T | grep -qE '^idle'"
echo "export SLURM_CONF=$SLURM_CONF"
