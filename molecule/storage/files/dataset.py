"""Write a small dataset (deterministic bytes) under DIR/imagenet-mini and upload it to bucket `datasets` of the S3
server at URL (moto), under the same names. The tests read DIR to know the files' checksums."""
import hashlib
import os
import sys

import boto3

directory, url = sys.argv[1], sys.argv[2]
root = os.path.join(directory, "imagenet-mini")
files = {"labels.csv": b"".join(b"%d,class-%d\n" % (i, i % 10) for i in range(1000))}
for i in range(12):
    block = hashlib.sha256(b"gpuops-%d" % i).digest()
    files["train/shard-%02d.bin" % i] = block * (8192 * (i + 1))  # 256 KiB to 3 MiB
for name, data in files.items():
    path = os.path.join(root, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as out:
        out.write(data)
s3 = boto3.client("s3", endpoint_url=url, region_name="us-east-1", aws_access_key_id="gpuops-test",
                  aws_secret_access_key="gpuops-test-secret")
try:
    s3.create_bucket(Bucket="datasets")
except s3.exceptions.BucketAlreadyOwnedByYou:
    pass
for name, data in files.items():
    s3.put_object(Bucket="datasets", Key="imagenet-mini/" + name, Body=data)
print("uploaded %d files, %d bytes" % (len(files), sum(len(d) for d in files.values())))
