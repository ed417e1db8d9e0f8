# Sourced by the benchmarks that start nginx on loopback (replicas.sh, http-vs-nginx.sh).
# `nginx_conf FILE DIR HTTP` writes FILE: one worker in the foreground, its pid, log and
# temporary folders under DIR (made here), no access log, and HTTP (the `http` block's own
# lines: upstreams and servers). As root, the worker stays root: nobody could not write DIR.
nginx_conf() {
    local file=$1 dir=$2 body=$3 user_line=""
    mkdir -p "$dir"
    [[ $EUID == 0 ]] && user_line="user root;"
    cat >"$file" <<CONF
$user_line
worker_processes 1;
daemon off;
pid $dir/nginx.pid;
error_log $dir/error.log warn;
events { worker_connections 4096; }
http {
    access_log off;
    client_body_temp_path $dir/body;
    proxy_temp_path $dir/proxy;
    fastcgi_temp_path $dir/fastcgi;
    uwsgi_temp_path $dir/uwsgi;
    scgi_temp_path $dir/scgi;
$body
}
CONF
}
